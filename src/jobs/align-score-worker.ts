/** A scoring thread (align-score.ts's ScoreThread): the shared rows read in place, rows scored on request. */
import { serveModel } from '../models/worker.js';
import { DocGrams } from './align-grams.js';
import { Int8Rows } from './align-hybrid.js';
import { pairScore, type ScoreRows, type ScoreShare, scoreRows } from './align-score.js';

serveModel(
  async (data) => {
    const share = data as ScoreShare;
    return pairScore(
      DocGrams.read(share.grams),
      share.means === undefined ? undefined : Int8Rows.read(share.means),
    );
  },
  () => null,
  { score: async (score, rows: ScoreRows) => scoreRows(score, rows) },
  async () => {},
);
