/** Response bodies of the annotation routes. */
import { z } from 'zod';
import { AnnotationContext, AnnotationSource } from '../requests.js';
import { Probabilities } from './search.js';

export const Annotation = z
  .strictObject({
    id: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .describe('The same for the same (annotator, s1, s2).'),
    s1: z.string(),
    s2: z.string(),
    label: z.string(),
    s1_id: z.int().min(0).optional(),
    s2_id: z.int().min(0).optional(),
    annotator: z.string().optional(),
    at: z.iso.datetime({ offset: true }),
    scheme: z.enum(['binary', 'turku']),
    decision: z.enum(['accept', 'reject', 'label']),
    predicted: z.string().optional(),
    probabilities: Probabilities.optional(),
    model: z.string().optional().describe('The model whose probabilities the annotator saw.'),
    mode: z.enum(['fast', 'balanced', 'best']).optional(),
    cosine: z.number().optional(),
    annRank: z.int().min(1).optional(),
    rerankRank: z.int().min(1).optional(),
    source: AnnotationSource.optional(),
    context: AnnotationContext.optional(),
  })
  .meta({
    id: 'Annotation',
    description:
      'One label of one pair by one annotator. `s1`, `s2`, `label` (and `s1_id`, `s2_id`, `annotator`,\n`at`, `scheme`) are the pair format the training scripts read; the rest says how the pair looked\nwhen it was judged.\n',
  });

export const CutStats = z
  .looseObject({
    threshold: z.number(),
    precision: z.number(),
    recall: z.number(),
    f1: z.number(),
    selected: z.int().describe('Pairs at or above the cut.'),
  })
  .meta({ id: 'CutStats' });

export const AnnotationReport = z
  .looseObject({
    pairs: z.int().describe('Distinct pairs with a majority judgement.'),
    positives: z.int(),
    ties: z.int(),
    withProbability: z.int().describe("Judged pairs whose annotation carries the model's probabilities."),
    withCosine: z.int(),
    model: z.array(CutStats).describe('Cuts on P(paraphrase), 0.05 to 0.95.'),
    cosine: z.array(CutStats).describe('Cuts on the cosine, 0.30 to 0.98.'),
    best: z.looseObject({
      model: CutStats.optional(),
      cosine: CutStats.optional(),
    }),
    agreement: z.looseObject({
      shared: z.int().describe('Pairs labeled by two or more annotators.'),
      kappa: z.array(
        z.looseObject({
          a: z.string(),
          b: z.string(),
          pairs: z.int(),
          binary: z.number().nullable(),
          labels: z.number().nullable(),
        }),
      ),
      alpha: z.looseObject({
        binary: z.number().nullable(),
        labels: z.number().nullable(),
      }),
    }),
  })
  .meta({ id: 'AnnotationReport' });

export const AnnotationSummary = z
  .strictObject({
    total: z.int().min(0),
    byScheme: z.record(z.string(), z.int()),
    byLabel: z.record(z.string(), z.int()).describe('Counts by `scheme:label`.'),
    byAnnotator: z.record(z.string(), z.int()).describe("Counts by annotator ('' for records without one)."),
    recent: z.array(Annotation).describe('The newest records first.'),
  })
  .meta({ id: 'AnnotationSummary' });
