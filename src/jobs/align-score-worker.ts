/** A scoring thread (align-score.ts's ScoreThread): the shared rows read in place, rows scored on request. */
import { serveModel } from '../models/worker.js';
import { pairScore, type ScoreRows, type ScoreShare, scoreRows } from './align-score.js';

serveModel(
  async (data) => pairScore(data as ScoreShare),
  () => null,
  { score: async (score, rows: ScoreRows) => scoreRows(score, rows) },
  async () => {},
);
