/** The jobs routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import { JobRequest, jobIdParams, resultsQuery, reviewQuery, streamQuery } from '../requests.js';
import { Cluster, Job, MinedPair, ReviewResponse } from '../schemas/jobs.js';

export const jobsPaths: ZodOpenApiPathsObject = {
  '/v1/jobs': {
    post: {
      operationId: 'createJob',
      tags: ['jobs'],
      summary: 'Start a bulk mining job over the served index.',
      description: md(
        'Mines paraphrase pairs for every query sentence in `scope` (the whole index by default): its `k`',
        'nearest neighbours (itself aside) are examined, filtered (`minCosine`, `preset`, `filter`,',
        '`excludeSameGroup`), optionally scored by ratio margin and labeled by the cross-encoder, and the',
        'accepted pairs are kept once each (a-b = b-a: the first query to find a pair keeps it). Jobs',
        'persist and checkpoint every `batchSize` sentences: after a crash or restart of the service a',
        'running job continues from its last checkpoint with no pair lost or repeated. At most',
        '`--max-jobs` run at once; others wait as `queued`. Needs the API key when one is configured.',
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
            schema: JobRequest,
            example: {
              k: 10,
              minCosine: 0.7,
              withinGroup: 'paper',
              excludeSame: ['section'],
              filter: {
                plrMax: 1,
              },
              cluster: true,
            },
          },
        },
      },
      responses: {
        '202': {
          description: 'The job was accepted; `Location` names it.',
          headers: {
            Location: {
              description: "The job's URL.",
              schema: { type: 'string' },
            },
          },
          content: {
            'application/json': {
              schema: Job,
            },
          },
        },
        ...errors('400', '401', '404', '409', '413', '415', '500'),
      },
    },
    get: {
      operationId: 'listJobs',
      tags: ['jobs'],
      summary: 'Every job this service has run or is running, oldest first.',
      responses: {
        '200': {
          description: 'The jobs.',
          content: {
            'application/json': {
              schema: z.strictObject({
                jobs: z.array(Job),
              }),
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/v1/jobs/{id}': {
    get: {
      operationId: 'getJob',
      tags: ['jobs'],
      summary: "A job's state and progress (processed / total, pairs, rate, ETA, error).",
      requestParams: { path: jobIdParams },
      responses: {
        '200': {
          description: 'The job.',
          content: {
            'application/json': {
              schema: Job,
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
    delete: {
      operationId: 'cancelJob',
      tags: ['jobs'],
      summary: 'Cancel a job (a running one stops at its next checkpoint); its results so far stay readable.',
      description: 'Cancelling a finished job changes nothing and returns it.',
      security: [
        {},
        {
          bearerAuth: [],
        },
      ],
      requestParams: { path: jobIdParams },
      responses: {
        '200': {
          description: 'The job, now cancelled (or as it had finished).',
          content: {
            'application/json': {
              schema: Job,
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/v1/jobs/{id}/results': {
    get: {
      operationId: 'getJobResults',
      tags: ['jobs'],
      summary: 'Accepted pairs as NDJSON, one MinedPair per line, in the order they were found.',
      description: md(
        'Pairs from sequence number `offset` on (at most `limit`). Without `follow` the stream ends at',
        'the pairs committed so far; with `follow=true` it stays open and sends new pairs until the job',
        'has finished. A client that lost the stream resumes with `offset` = last `seq` + 1.',
        '',
      ),
      requestParams: { path: jobIdParams, query: resultsQuery },
      responses: {
        '200': {
          description: 'NDJSON stream of MinedPair objects.',
          content: {
            'application/x-ndjson': {
              schema: MinedPair,
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/v1/jobs/{id}/review': {
    get: {
      operationId: 'getJobReview',
      tags: ['jobs'],
      summary: 'The pairs to annotate first: the least sure labels, one document at a time.',
      description: md(
        "Labeled pairs ordered by |P(paraphrase) - the labeling model's cut|, smallest first: the",
        "annotations that move the index's calibration and cut most (`paramine annotations threshold",
        '--calibrate`). Within 0.01 of each other, pairs from documents (the `group` metadata key) not',
        'shown yet come first. Pairs without probabilities (a job without `rerank`) are left out.',
        '',
      ),
      requestParams: { path: jobIdParams, query: reviewQuery },
      responses: {
        '200': {
          description: 'The page of pairs.',
          content: { 'application/json': { schema: ReviewResponse } },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/v1/jobs/{id}/clusters': {
    get: {
      operationId: 'getJobClusters',
      tags: ['jobs'],
      summary: 'Multi-reference sets (union-find over the accepted pairs) as NDJSON; only with `cluster`.',
      description: 'Written when the job finishes; empty before, and for jobs without `cluster`.',
      requestParams: { path: jobIdParams, query: streamQuery },
      responses: {
        '200': {
          description: 'NDJSON stream of clusters.',
          content: {
            'application/x-ndjson': {
              schema: Cluster,
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/v1/jobs/{id}/events': {
    get: {
      operationId: 'getJobEvents',
      tags: ['jobs'],
      summary: "A job's live progress as server-sent events.",
      description: md(
        'A `text/event-stream`: an `event: progress` whose `data` is the Job (processed, pairs, rate,',
        'ETA, state) now and after every checkpoint or state change (at most five a second), then',
        '`event: end` once the job has finished (at once for a finished job). Comment lines keep an idle',
        "stream open. Browsers' EventSource cannot send a Bearer key; with `--auth-all`, read it with",
        'fetch() and the Authorization header.',
        '',
      ),
      requestParams: { path: jobIdParams },
      responses: {
        '200': {
          description: 'The event stream.',
          content: {
            'text/event-stream': {
              schema: z
                .looseObject({
                  event: z.enum(['progress', 'end']).optional(),
                  data: z.string().describe('JSON, the Job for `progress`, `{}` for `end`.').optional(),
                  id: z.string().optional(),
                  retry: z.union([z.int(), z.string()]).optional(),
                })
                .describe('One event of the stream (each of its fields, as text).'),
              example: md(
                'retry: 2000',
                '',
                'event: progress',
                'data: {"id":"…","state":"running","processed":256,"total":1000,"pairs":31,"rate":512.4,"etaSeconds":1.45,…}',
                '',
                'event: end',
                'data: {}',
                '',
              ),
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
};
