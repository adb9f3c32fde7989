/** Read-only routes: sentences by id, the index manifest, health and readiness, the OpenAPI contract. */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { ServiceContext } from '../context.js';

const idParams = z.object({
  id: z.coerce.number().int('must be an integer').min(0).max(Number.MAX_SAFE_INTEGER),
});
const OPENAPI = new URL('../../../openapi.yaml', import.meta.url);

export function infoRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get('/v1/sentences/:id', async (req) => {
    const { id } = parseInput(idParams, req.params, 'id');
    const rec = ctx.store.get(id);
    if (rec === undefined) throw new ParamineError('NOT_FOUND', `no sentence with id ${id}`, { field: 'id' });
    return { id, ...rec };
  });

  app.get('/v1/index', async () => ({ ...ctx.indexInfo(), sentences: ctx.store.count }));

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const checks = ctx.readiness();
    const ready = Object.values(checks).every(Boolean);
    return reply.status(ready ? 200 : 503).send({ ready, checks });
  });

  let spec: string | undefined;
  app.get('/openapi.yaml', async (_req, reply) => {
    spec ??= await readFile(OPENAPI, 'utf8');
    return reply.type('application/yaml').send(spec);
  });
}
