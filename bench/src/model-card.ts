/** What the model tables say about where a model came from: its card (metrics.json) or the catalog fetch. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const cardSchema = z.looseObject({
  training: z.looseObject({ train_seconds: z.number().optional(), device: z.string().optional() }).optional(),
});

/** A JSON file's content, {} when it is not there. */
export const readJsonOr = (path: string): unknown =>
  existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};

/** Where the card says the model was trained (device, minutes); '—' without a training card. */
export function trainedBy(dir: string): string {
  const t = cardSchema.safeParse(readJsonOr(join(dir, 'metrics.json')));
  const training = t.success ? t.data.training : undefined;
  if (training?.train_seconds === undefined) return '—';
  const minutes = (training.train_seconds / 60).toFixed(1);
  return `${training.device?.split(',')[0] ?? 'this project’s 2-core VM'}, ${minutes} min`;
}
