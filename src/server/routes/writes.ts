/** Writes to the serving index: POST /v1/sentences, DELETE /v1/sentences/:id (a key when keys are set). */
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { addSentencesRequest, sentenceIdParams } from '../contract/requests.js';

export const writeRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.addHook('onRequest', auth.require('write'));
  const { writes } = ctx.service;
  app.post('/v1/sentences', async (req) => {
    const { sentences } = parseInput(addSentencesRequest, req.body);
    const added = await writes.add(sentences.map((s) => ({ text: s.text, meta: s.meta, clientId: s.id })));
    return { sentences: added, seq: writes.stats.seq };
  });
  app.delete('/v1/sentences/:id', async (req) => {
    const { id } = parseInput(sentenceIdParams, req.params, 'id');
    const { deleted, missing } = await writes.delete([id]);
    if (missing.length > 0)
      throw new ParamineError('NOT_FOUND', `no sentence with id ${id}`, { field: 'id' });
    return { id, deleted: deleted.length > 0 };
  });
};
