/**
 * Pair annotations: write one (accept, reject or a label in the binary or Turku scheme), undo it, look
 * up the current annotator's labels of some pairs, summarize, and export everything as the pair files
 * the training scripts read (JSON lines or TSV). Who wrote a record is the API key's name when the
 * service has keys; otherwise the optional `annotator` of the request.
 */
import { Readable } from 'node:stream';
import {
  annotationId,
  annotationReport,
  EXPORT_MEDIA_TYPE,
  exportLines,
  labelFor,
} from '../../annotations/index.js';
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import {
  annotationExportQuery,
  annotationIdParams,
  annotationLookupRequest,
  annotationReportQuery,
  annotationRequest,
  annotationSummaryQuery,
} from '../contract/requests.js';

export const annotationRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  const store = ctx.annotations;
  if (store === undefined) throw new ParamineError('BAD_CONFIG', 'annotation routes need a store');
  app.addHook('onRequest', auth.require('read'));
  const write = { onRequest: auth.require('write') };
  /** With keys, the key's name (checked by the hook); without, what the request says. */
  const annotatorOf = (keyName: string | null, given: string | undefined): string | undefined =>
    auth.configured ? (keyName ?? undefined) : given;

  app.post('/v1/annotations', write, async (req, reply) => {
    const b = parseInput(annotationRequest, req.body);
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

  app.get('/v1/annotations', { config: { stream: true } }, async (req, reply) => {
    const { format, ...q } = parseInput(annotationExportQuery, req.query, 'query');
    const lines = exportLines(store.list(q), format);
    return reply
      .type(`${EXPORT_MEDIA_TYPE[format]}; charset=utf-8`)
      .header('content-disposition', `attachment; filename="annotations.${format}"`)
      .send(Readable.from(lines));
  });

  app.get('/v1/annotations/summary', async (req) => {
    const { recent, ...q } = parseInput(annotationSummaryQuery, req.query, 'query');
    const latest = [];
    for (const a of store.list(q, { reverse: true })) {
      if (latest.length >= recent) break;
      latest.push(a);
    }
    return { ...store.summary(q), recent: latest };
  });

  // What the annotations say about the model's label and the cosine at every cut, and annotator agreement.
  app.get('/v1/annotations/report', async (req) => {
    const q = parseInput(annotationReportQuery, req.query, 'query');
    return annotationReport(store.list(q));
  });

  app.post('/v1/annotations/lookup', async (req) => {
    const b = parseInput(annotationLookupRequest, req.body);
    const annotator = annotatorOf(req.apiKeyName, b.annotator);
    return {
      annotations: b.pairs.map((p) => store.get(annotationId(annotator, p.s1, p.s2)) ?? null),
    };
  });

  app.delete('/v1/annotations/:id', write, async (req) => {
    const { id } = parseInput(annotationIdParams, req.params, 'id');
    // With keys, a key removes only what it wrote.
    const own = store.get(id);
    if (own === undefined || (auth.configured && own.annotator !== req.apiKeyName)) {
      throw new ParamineError('NOT_FOUND', `no annotation ${id} of yours`, { field: 'id' });
    }
    return (await store.remove(id)) ?? own;
  });
};
