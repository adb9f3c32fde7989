/** The annotations routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import {
  annotationExportQuery,
  annotationIdParams,
  annotationLookupRequest,
  annotationReportQuery,
  annotationRequest,
  annotationSummaryQuery,
} from '../requests.js';
import { Annotation, AnnotationReport, AnnotationSummary } from '../schemas/annotations.js';

export const annotationsPaths: ZodOpenApiPathsObject = {
  '/v1/annotations': {
    post: {
      operationId: 'annotate',
      tags: ['annotations'],
      summary: "Accept, reject or label one pair (replaces this annotator's earlier label of it).",
      description: md(
        'One record per (annotator, s1, s2): labeling the same pair again replaces the earlier record.',
        "`accept` stores the scheme's accept label (`paraphrase`; Turku `4`), `reject` its reject label",
        '(`not_paraphrase`; Turku `2`), `label` the given `label`, checked against the scheme (binary:',
        '`paraphrase`/`not_paraphrase`, or `1`/`0`; Turku: base 1-4, then `<` or `>`, then flags `i`,',
        "`s`, stored in one spelling: `4>si` becomes `4>is`). The annotator is the API key's name when",
        "the service has keys (the body's `annotator` is then ignored), else the body's `annotator`.",
        'Needs the API key when one is configured.',
        '',
      ),
      security: [
        {},
        {
          bearerAuth: [],
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: annotationRequest,
            example: {
              s1: 'A gentle answer turns away wrath.',
              s2: 'A soft answer turneth away wrath.',
              s2_id: 731,
              scheme: 'turku',
              decision: 'label',
              label: '4>i',
              predicted: 'paraphrase',
              cosine: 0.91,
              annRank: 1,
              source: {
                kind: 'search',
              },
            },
          },
        },
      },
      responses: {
        '201': {
          description: 'The stored annotation.',
          content: {
            'application/json': {
              schema: Annotation,
            },
          },
        },
        ...errors('400', '401', '413', '415', '500'),
      },
    },
    get: {
      operationId: 'exportAnnotations',
      tags: ['annotations'],
      summary: 'Every annotation as a pair file for training (JSON lines or TSV), oldest first.',
      description: md(
        '`jsonl`: one Annotation a line; `s1`, `s2` and `label` are what `paramine-train sbert --pairs`,',
        '`paramine bench` and the other pair readers take, the other fields ride along. `tsv`: the header',
        '`s1<TAB>s2<TAB>label` and one pair a line (tabs and line breaks inside texts become spaces). The',
        'readers take one label scheme a file: export one `scheme` at a time.',
        '',
      ),
      requestParams: { query: annotationExportQuery },
      responses: {
        '200': {
          description: 'The export, as an attachment.',
          content: {
            'application/x-ndjson': {
              schema: Annotation,
            },
            'text/tab-separated-values': {
              schema: z.string().regex(/^s1\ts2\tlabel\n/),
            },
          },
        },
        ...errors('400', '401', '500'),
      },
    },
  },
  '/v1/annotations/summary': {
    get: {
      operationId: 'annotationSummary',
      tags: ['annotations'],
      summary: 'Counts by scheme, label and annotator, and the most recent annotations.',
      requestParams: { query: annotationSummaryQuery },
      responses: {
        '200': {
          description: 'The summary.',
          content: {
            'application/json': {
              schema: AnnotationSummary,
            },
          },
        },
        ...errors('400', '401', '500'),
      },
    },
  },
  '/v1/annotations/report': {
    get: {
      operationId: 'annotationReport',
      tags: ['annotations'],
      summary: "What the annotations say about the model's label and the cosine, and annotator agreement.",
      description: md(
        "Each distinct pair's gold is its annotators' majority (paraphrase or not; ties left out). For the",
        "cross-encoder's P(paraphrase) and for the bi-encoder cosine, both as stored with the annotation",
        '(what the page showed when the pair was judged): precision, recall and F1 at each cut, and the cut',
        "with the best F1. Agreement where two or more annotators labeled a pair: Cohen's kappa for each pair",
        "of annotators (on paraphrase or not, and on the labels), Krippendorff's alpha (nominal) over all.",
        '',
      ),
      requestParams: { query: annotationReportQuery },
      responses: {
        '200': {
          description: 'The report.',
          content: {
            'application/json': {
              schema: AnnotationReport,
            },
          },
        },
        ...errors('400', '401', '500'),
      },
    },
  },
  '/v1/annotations/lookup': {
    post: {
      operationId: 'lookupAnnotations',
      tags: ['annotations'],
      summary: "This annotator's current records of some pairs (null where none).",
      description: md(
        "A read (a POST only for the size of its body). The annotator is the sent key's name when the",
        "service has keys, else the body's `annotator`.",
        '',
      ),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: annotationLookupRequest,
          },
        },
      },
      responses: {
        '200': {
          description: 'One entry per pair, in order.',
          content: {
            'application/json': {
              schema: z.strictObject({
                annotations: z.array(Annotation.nullable()),
              }),
            },
          },
        },
        ...errors('400', '401', '500'),
      },
    },
  },
  '/v1/annotations/{id}': {
    delete: {
      operationId: 'deleteAnnotation',
      tags: ['annotations'],
      summary: "Remove an annotation (the page's undo); returns what was removed.",
      description: 'With API keys, a key removes only the annotations it wrote (others are a 404).',
      security: [
        {},
        {
          bearerAuth: [],
        },
      ],
      requestParams: { path: annotationIdParams },
      responses: {
        '200': {
          description: 'The removed annotation.',
          content: {
            'application/json': {
              schema: Annotation,
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
};
