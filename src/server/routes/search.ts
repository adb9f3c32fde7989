/** POST /v1/search and POST /v1/classify: thin adapters over the search core, read routes. */
import { z } from 'zod';
import { ParamineError } from '../../errors.js';
import { searchOptionsSchema } from '../../search/types.js';
import { normalize } from '../../text/index.js';
import { parseInput } from '../../validate.js';
import { clientGone } from '../abort.js';
import type { RoutePlugin } from '../context.js';

export const searchRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('read'));
  const { limits } = ctx;
  const { core } = ctx.service;
  const text = z
    .string()
    .max(limits.maxTextChars, `at most ${limits.maxTextChars} characters`)
    .refine(
      (s) => normalize(s) !== '',
      'must not be empty (after whitespace and control characters are removed)',
    );
  const searchBody = searchOptionsSchema
    .extend({
      text: text.optional(),
      texts: z
        .array(text)
        .min(1)
        .max(limits.maxTexts, `at most ${limits.maxTexts} texts per request`)
        .optional(),
      k: z.number().int().min(1).max(limits.maxK, `at most ${limits.maxK}`).default(10),
      candidates: z
        .number()
        .int()
        .min(1)
        .max(limits.maxCandidates, `at most ${limits.maxCandidates}`)
        .optional(),
    })
    .strict()
    .refine((b) => (b.text === undefined) !== (b.texts === undefined), {
      message: 'give exactly one of "text" or "texts"',
      path: ['text'],
    });

  app.post('/v1/search', async (req, reply) => {
    const { text: one, texts, ...options } = parseInput(searchBody, req.body);
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
    ctx.metrics.candidates.inc(response.results.reduce((n, r) => n + r.candidates.length, 0));
    return response;
  });

  const pair = z.union([z.tuple([text, text]), z.object({ s1: text, s2: text }).strict()]);
  const classifyBody = z
    .object({
      pairs: z.array(pair).min(1).max(limits.maxPairs, `at most ${limits.maxPairs} pairs per request`),
    })
    .strict();

  app.post('/v1/classify', async (req, reply) => {
    const { pairs } = parseInput(classifyBody, req.body);
    if (!core.canRerank) {
      throw new ParamineError(
        'UNAVAILABLE',
        'no cross-encoder loaded; start the service with --reranker DIR',
      );
    }
    const asTuples = pairs.map((p) => (Array.isArray(p) ? p : ([p.s1, p.s2] as const)));
    const started = performance.now();
    const scores = await core.classify(asTuples, clientGone(reply));
    return {
      labels: core.labels,
      results: scores.map((s, i) => ({ s1: asTuples[i]?.[0], s2: asTuples[i]?.[1], ...s })),
      timings: { rerankMs: performance.now() - started },
    };
  });
};
