/** POST /v1/search and POST /v1/classify: thin adapters over the search core, read routes. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ParamineError } from '../../errors.js';
import type { SearchResponse } from '../../search/types.js';
import type { SentenceContext } from '../../service/index.js';
import { parseInput } from '../../validate.js';
import { clientGone } from '../abort.js';
import type { RoutePlugin } from '../context.js';
import { classifyRequest, searchRequest } from '../contract/requests.js';
import { RefusalPacer } from '../pacing.js';

export const searchRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('read'));
  const { limits } = ctx;
  const { core } = ctx.service;
  const searchBody = searchRequest(limits);

  // Refused before the body is read when the model could not take even the smallest request (a search
  // that reranks: once the body is parsed, before it is validated); every refusal, there or once the
  // request's own size is known, is paced per connection and written straight (pacing.ts). A refusal
  // after validation costs the event loop about 1.4x one before it (zod, the handler).
  const pacer = new RefusalPacer(limits.refusalPaceMs);
  const paced = async <T>(reply: FastifyReply, work: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (e) {
      if (!(e instanceof ParamineError && e.code === 'OVERLOADED')) throw e;
      // Answered: fastify runs no later hook nor the handler for a sent reply.
      pacer.refuse(reply, e);
      return undefined;
    }
  };
  const admit = (model: 'encoder' | 'reranker') => ({
    onRequest: (_req: FastifyRequest, reply: FastifyReply) => paced(reply, () => core.admitSmallest(model)),
  });

  app.post(
    '/v1/search',
    {
      ...admit('encoder'),
      // Once the body is parsed, and before it is validated: a search that would rerank is refused here
      // when the cross-encoder could not take one pair (its queue, not the encoder's, fills under load).
      preValidation: (req: FastifyRequest, reply: FastifyReply) =>
        paced(reply, () => {
          if ((req.body as { rerank?: unknown } | null)?.rerank !== false) core.admitSmallest('reranker');
        }),
    },
    (req, reply) => paced(reply, () => search(req, reply)),
  );

  const search = async (req: FastifyRequest, reply: FastifyReply) => {
    const { text: one, texts, context, ...options } = parseInput(searchBody, req.body);
    const queries = texts ?? [one as string];
    // Reranking costs one cross-encoder pass per (query, candidate): bound it per request.
    const pairs = queries.length * (options.candidates ?? Math.max(20, options.k));
    if (options.rerank && core.canRerank && pairs > limits.maxRerankPairs) {
      throw new ParamineError(
        'BAD_INPUT',
        `texts x candidates = ${pairs} pairs to rerank; at most ${limits.maxRerankPairs} per request`,
        { field: 'candidates' },
      );
    }
    const response = await core.search(queries, options, clientGone(reply));
    if (context) withContext(response, (id) => ctx.service.context(id, context));
    ctx.metrics.candidates.inc(response.results.reduce((n, r) => n + r.candidates.length, 0));
    return response;
  };

  const classifyBody = classifyRequest(limits);

  app.post('/v1/classify', admit('reranker'), (req, reply) => paced(reply, () => classify(req, reply)));

  const classify = async (req: FastifyRequest, reply: FastifyReply) => {
    const { pairs, labels } = parseInput(classifyBody, req.body);
    if (!core.canRerank) {
      throw new ParamineError(
        'UNAVAILABLE',
        'no cross-encoder loaded; start the service with --reranker DIR',
      );
    }
    const asTuples = pairs.map((p) => (Array.isArray(p) ? p : ([p.s1, p.s2] as const)));
    const started = performance.now();
    const scores = await core.classify(asTuples, clientGone(reply), labels?.mode);
    return {
      labels: core.labels,
      results: scores.map((s, i) => ({ s1: asTuples[i]?.[0], s2: asTuples[i]?.[1], ...s })),
      timings: { rerankMs: performance.now() - started },
    };
  };
};

/** Each candidate read from a document gets its neighbours there. */
function withContext(response: SearchResponse, contextOf: (id: number) => SentenceContext | undefined): void {
  for (const r of response.results) {
    for (const c of r.candidates) {
      const around = contextOf(c.id);
      if (around) Object.assign(c, { context: around });
    }
  }
}
