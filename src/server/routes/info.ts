import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { openApiDocument } from '../contract/document.js';
import { sentenceIdParams, sentenceQuery } from '../contract/requests.js';

export const infoRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('read'));
  const { service } = ctx;
  app.get('/v1/sentences/:id', async (req) => {
    const id = service.sentenceId(parseInput(sentenceIdParams, req.params, 'id').id);
    const { context } = parseInput(sentenceQuery, req.query, 'query');
    const rec = service.store.get(id);
    if (rec === undefined) throw new ParamineError('NOT_FOUND', `no sentence with id ${id}`, { field: 'id' });
    const around = context > 0 ? service.context(id, context) : undefined;
    return around === undefined ? { id, ...rec } : { id, ...rec, context: around };
  });

  app.get('/v1/index', async () => {
    const info = service.indexInfo();
    return {
      ...info,
      sentences: service.store.count,
      updates: service.writes.stats,
      operatingPoints: info.manifest.operatingPoints ?? [],
    };
  });

  // What the web page's domain filter offers: every domain with its σ distribution and fit, if any.
  app.get('/v1/domains', async () => ({
    domains: (await service.domains.list()).map((e) => ({
      name: e.name,
      method: e.method,
      unit: e.unit,
      count: e.count,
      current: e.index === service.domains.identity,
      changePoint: e.changePoint,
      quantiles: e.quantiles,
      combined: e.combined ? { features: e.combined.features, weights: e.combined.weights } : null,
      createdAt: e.createdAt,
    })),
  }));

  app.get('/openapi.json', async () => openApiDocument().json);
  app.get('/openapi.yaml', async (_req, reply) =>
    reply.type('application/yaml').send(openApiDocument().yaml),
  );
};

export const healthRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('open'));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks = { ...(await ctx.service.readiness()), ...ctx.readiness?.() };
    const ready = Object.values(checks).every(Boolean);
    return reply.status(ready ? 200 : 503).send({ ready, checks });
  });
};
