/**
 * Writes to the serving index (a key when keys are set): POST /v1/sentences (adds, replaces),
 * DELETE /v1/sentences/:id, POST /v1/sentences/delete (ids, or by metadata).
 */
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { addSentencesRequest, deleteSentencesRequest, sentenceIdParams } from '../contract/requests.js';

export const writeRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('write'));
  const { writes } = ctx.service;
  app.post('/v1/sentences', async (req) => {
    const { sentences } = parseInput(addSentencesRequest, req.body);
    const added = await writes.add(
      sentences.map((s) => ({ text: s.text, meta: s.meta, clientId: s.id, replaces: s.replaces })),
    );
    return { sentences: added, seq: writes.stats.seq };
  });
  app.delete('/v1/sentences/:id', async (req) => {
    const id = ctx.service.sentenceId(parseInput(sentenceIdParams, req.params, 'id').id);
    const { deleted, missing } = await writes.delete([id]);
    if (missing.length > 0)
      throw new ParamineError('NOT_FOUND', `no sentence with id ${id}`, { field: 'id' });
    return { id, deleted: deleted.length > 0 };
  });
  app.post('/v1/sentences/delete', async (req) => {
    const body = parseInput(deleteSentencesRequest, req.body);
    if (body.where !== undefined) return { ...(await writes.deleteWhere(body.where)), seq: writes.stats.seq };
    const { deleted, missing } = await writes.delete(body.ids ?? []);
    return { deleted: deleted.length, ids: deleted, missing, seq: writes.stats.seq };
  });
};
