/**
 * Pair annotations: write one (accept, reject or a label in the binary or Turku scheme), undo it, look
 * up the current annotator's labels of some pairs, summarize, and export everything as the pair files
 * the training scripts read (JSON lines or TSV). Who wrote a record is the API key's name when the
 * service has keys; otherwise the optional `annotator` of the request.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import {
  annotationId,
  annotationReport,
  EXPORT_FORMATS,
  EXPORT_MEDIA_TYPE,
  exportLines,
  labelFor,
  SCHEMES,
} from '../../annotations/index.js';
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import { type RoutePlugin, STREAM_TIMEOUT_MS } from '../context.js';

const MAX_TEXT = 4000;
const text = z.string().min(1, 'must not be empty').max(MAX_TEXT, `at most ${MAX_TEXT} characters`);
const sentenceId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const annotatorName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\p{L}\p{N} ._@-]+$/u, 'letters, digits, space and . _ @ - only');

const annotationBody = z
  .object({
    s1: text,
    s2: text,
    s1_id: sentenceId.nullable().optional(),
    s2_id: sentenceId.nullable().optional(),
    scheme: z.enum(SCHEMES),
    decision: z.enum(['accept', 'reject', 'label']),
    label: z.string().min(1).max(16).optional(),
    annotator: annotatorName.optional(),
    predicted: z.string().min(1).max(64).optional(),
    probabilities: z.record(z.string().max(64), z.number().min(0).max(1)).optional(),
    cosine: z.number().min(-1.001).max(1.001).optional(),
    annRank: z.number().int().min(1).optional(),
    rerankRank: z.number().int().min(1).optional(),
    source: z
      .object({
        kind: z.enum(['search', 'job']),
        job: z.uuid().optional(),
        seq: z.number().int().min(0).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const exportQuery = z
  .object({
    format: z.enum(EXPORT_FORMATS).default('jsonl'),
    annotator: annotatorName.optional(),
    scheme: z.enum(SCHEMES).optional(),
    decision: z.enum(['accept', 'reject', 'label']).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

const summaryQuery = z
  .object({
    scheme: z.enum(SCHEMES).optional(),
    annotator: annotatorName.optional(),
    recent: z.coerce.number().int().min(0).max(200).default(20),
  })
  .strict();

const reportQuery = z
  .object({ scheme: z.enum(SCHEMES).optional(), since: z.string().datetime().optional() })
  .strict();

const lookupBody = z
  .object({
    pairs: z.array(z.object({ s1: text, s2: text }).strict()).max(500, 'at most 500 pairs'),
    annotator: annotatorName.optional(),
  })
  .strict();

const idParams = z.object({ id: z.string().regex(/^[0-9a-f]{32}$/, 'must be an annotation id') });

export const annotationRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  const store = ctx.annotations;
  if (store === undefined) throw new ParamineError('BAD_CONFIG', 'annotation routes need a store');
  app.addHook('onRequest', auth.require('read'));
  const write = { onRequest: auth.require('write') };
  /** With keys, the key's name (checked by the hook); without, what the request says. */
  const annotatorOf = (keyName: string | null, given: string | undefined): string | undefined =>
    auth.configured ? (keyName ?? undefined) : given;

  app.post('/v1/annotations', write, async (req, reply) => {
    const b = parseInput(annotationBody, req.body);
    const annotator = annotatorOf(req.apiKeyName, b.annotator);
    const { annotator: _ignored, s1_id, s2_id, label, ...rest } = b;
    const record = await store.put({
      ...rest,
      label: labelFor(b.scheme, b.decision, label),
      ...(s1_id === undefined || s1_id === null ? {} : { s1_id }),
      ...(s2_id === undefined || s2_id === null ? {} : { s2_id }),
      ...(annotator === undefined ? {} : { annotator }),
    });
    return reply.code(201).send(record);
  });

  app.get('/v1/annotations', { handlerTimeout: STREAM_TIMEOUT_MS }, async (req, reply) => {
    const { format, ...q } = parseInput(exportQuery, req.query, 'query');
    const lines = exportLines(store.list(q), format);
    return reply
      .type(`${EXPORT_MEDIA_TYPE[format]}; charset=utf-8`)
      .header('content-disposition', `attachment; filename="annotations.${format}"`)
      .send(Readable.from(lines));
  });

  app.get('/v1/annotations/summary', async (req) => {
    const { recent, ...q } = parseInput(summaryQuery, req.query, 'query');
    const latest = [];
    for (const a of store.list(q, { reverse: true })) {
      if (latest.length >= recent) break;
      latest.push(a);
    }
    return { ...store.summary(q), recent: latest };
  });

  // What the annotations say about the model's label and the cosine at every cut, and annotator agreement.
  app.get('/v1/annotations/report', async (req) => {
    const q = parseInput(reportQuery, req.query, 'query');
    return annotationReport(store.list(q));
  });

  app.post('/v1/annotations/lookup', async (req) => {
    const b = parseInput(lookupBody, req.body);
    const annotator = annotatorOf(req.apiKeyName, b.annotator);
    return {
      annotations: b.pairs.map((p) => store.get(annotationId(annotator, p.s1, p.s2)) ?? null),
    };
  });

  app.delete('/v1/annotations/:id', write, async (req) => {
    const { id } = parseInput(idParams, req.params, 'id');
    // With keys, a key removes only what it wrote.
    const own = store.get(id);
    if (own === undefined || (auth.configured && own.annotator !== req.apiKeyName)) {
      throw new ParamineError('NOT_FOUND', `no annotation ${id} of yours`, { field: 'id' });
    }
    return (await store.remove(id)) ?? own;
  });
};
