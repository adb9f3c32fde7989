/** The options of document alignment (`paramine docs align`, a job's `docPairs.align`), declared once. */
import { z } from 'zod';
import { cli } from '../config.js';
import { DEFAULT_BAND } from './align-band.js';

/** The options of `paramine docs align`, declared once with their flags (src/config.ts). */
export const alignOptionsSchema = z.object({
  method: z.enum(['tfidf', 'mean', 'hybrid']).default('tfidf').register(cli, {
    flag: '--method <tfidf|mean|hybrid>',
    description:
      "document scores: character n-gram TF-IDF cosine (Turku), the cosine of the sentence embeddings' means, or hybrid: searched by the mean of both, each document's best candidates then scored by that mean and how well their sentences pair up (needs vectors.f16; separates planted pairs from chance ones best: docs/benchmarks/documents.md)",
  }),
  min: z
    .number()
    .min(-1)
    .max(1)
    .optional()
    .register(cli, {
      flag: '--min <score>',
      description: `the band: pairs at least this similar (lower: misaligned); the gap the data shows (align-band.ts), else ${DEFAULT_BAND.min}`,
    }),
  max: z
    .number()
    .min(-1)
    .max(1.01)
    .optional()
    .register(cli, {
      flag: '--max <score>',
      description: `the band: pairs below this (higher: the same text reformatted); the gap below a mode of near copies, else ${DEFAULT_BAND.max}`,
    }),
  autoBand: z.boolean().default(true).register(cli, {
    flag: '--no-auto-band',
    description:
      "where --min / --max are not given, the edges the nearest partners' scores propose (--report shows them), else the defaults; --no-auto-band keeps the defaults (on a corpus whose two modes are two topics, not partner / no partner, the proposal cuts recall: docs/scopes.md)",
  }),
  partners: z.number().int().min(1).max(100).default(3).register(cli, {
    flag: '--partners <m>',
    description: 'most partner documents per document',
  }),
  docKey: z.string().min(1).default('doc').register(cli, {
    flag: '--doc-key <key>',
    description: 'the group key whose values are the documents',
  }),
  windowKey: z.string().min(1).optional().register(cli, {
    flag: '--window-key <key>',
    description: 'with --days: pairs only between documents whose dates under this key are that close',
  }),
  days: z
    .number()
    .positive()
    .optional()
    .register(cli, { flag: '--days <n>', description: 'the window, in days' }),
  same: z
    .array(z.string().min(1))
    .default([])
    .register(cli, {
      flag: '--same <keys>',
      description:
        'pairs only between documents with equal values of these keys (comma-separated: title,subforum)',
      parse: (v) => v.split(',').filter((k) => k !== ''),
    }),
  differ: z
    .array(z.string().min(1))
    .default([])
    .register(cli, {
      flag: '--differ <keys>',
      description:
        'pairs only between documents whose values of these keys differ (comma-separated: two outlets, two translations, two subtitle files)',
      parse: (v) => v.split(',').filter((k) => k !== ''),
    }),
  dim: z.number().int().min(32).max(4096).default(512).register(cli, {
    flag: '--dim <n>',
    description:
      'tfidf: dimensions of the projection the candidate search uses (the scores are exact TF-IDF cosines)',
  }),
});
export type AlignOptionsInput = z.input<typeof alignOptionsSchema>;
export type AlignOptions = z.output<typeof alignOptionsSchema>;
