/** The ops routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import { Health, Ready } from '../schemas/info.js';

export const opsPaths: ZodOpenApiPathsObject = {
  '/healthz': {
    get: {
      operationId: 'healthz',
      tags: ['ops'],
      summary: 'Liveness: the process is up.',
      security: [],
      responses: {
        '200': {
          description: 'Alive.',
          content: {
            'application/json': {
              schema: Health,
              example: {
                status: 'ok',
              },
            },
          },
        },
        ...errors('500'),
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      tags: ['ops'],
      summary: 'Readiness: the models and the index answer.',
      description: md(
        'Encodes a short sentence, searches its nearest neighbour and (with a cross-encoder) scores one',
        'pair, straight on the models (a full request queue is not "not ready"). The answer is cached for',
        'a few seconds.',
        '',
      ),
      security: [],
      responses: {
        '200': {
          description: 'Ready to answer queries.',
          content: {
            'application/json': {
              schema: Ready,
              example: {
                ready: true,
                checks: {
                  models: true,
                  index: true,
                  reranker: true,
                  serving: true,
                },
              },
            },
          },
        },
        ...errors('500'),
        '503': {
          description: 'Not ready (still loading, or shutting down).',
          content: {
            'application/json': {
              schema: Ready,
              example: {
                ready: false,
                checks: {
                  models: false,
                  index: false,
                  reranker: false,
                  serving: false,
                },
              },
            },
          },
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      tags: ['ops'],
      summary: 'Prometheus metrics in the text exposition format.',
      description: md(
        '`paramine_http_request_duration_seconds{method,route,status}`, `paramine_encoder_batch_size`,',
        '`paramine_encoder_queue_depth`, `paramine_stage_duration_seconds{stage}` (encode, search,',
        'rerank), `paramine_candidates_returned_total`, and the process metrics prefixed `paramine_`.',
        '',
      ),
      responses: {
        '200': {
          description: 'Metrics (`text/plain; version=0.0.4; charset=utf-8`).',
          content: {
            'text/plain': {
              schema: z.string(),
              example: md(
                '# HELP paramine_candidates_returned_total Paraphrase candidates returned by /v1/search',
                '# TYPE paramine_candidates_returned_total counter',
                'paramine_candidates_returned_total 42',
                '',
              ),
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
};
