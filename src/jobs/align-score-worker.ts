/** A scoring thread (align-score.ts's ScoreThread): the shared rows read in place, rows scored on request. */
import { workerData } from 'node:worker_threads';
import { DocGrams } from './align-grams.js';
import { Int8Rows } from './align-hybrid.js';
import { pairScore, type ScoreRows, type ScoreShare, scoreRows } from './align-score.js';
import { serveInOrder } from './align-thread.js';

const share = workerData as ScoreShare;
const score = pairScore(
  DocGrams.read(share.grams),
  share.means === undefined ? undefined : Int8Rows.read(share.means),
);
serveInOrder((rows: ScoreRows) => {
  const out = scoreRows(score, rows);
  return { value: out, transfer: [out.buffer] };
});
