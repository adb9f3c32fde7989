/** The info routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import { sentenceIdParams, sentenceQuery } from '../requests.js';
import { IndexInfo, Sentence } from '../schemas/info.js';
import { DomainList } from '../schemas/jobs.js';

const openApiShape = z
  .looseObject({
    openapi: z.string().regex(/^3\.1\./),
    info: z.record(z.string(), z.unknown()),
    paths: z.record(z.string(), z.unknown()),
  })
  .describe('This OpenAPI document.');

export const infoPaths: ZodOpenApiPathsObject = {
  '/v1/sentences/{id}': {
    get: {
      operationId: 'getSentence',
      tags: ['info'],
      summary: 'One stored sentence with its metadata.',
      requestParams: { path: sentenceIdParams, query: sentenceQuery },
      responses: {
        '200': {
          description: 'The sentence.',
          content: {
            'application/json': {
              schema: Sentence,
              example: {
                id: 5,
                text: 'to know wisdom and instruction; to discern the words of understanding;',
                meta: {
                  ref: 'Proverbs 1:2',
                  version: 'WEB',
                },
              },
            },
          },
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/v1/index': {
    get: {
      operationId: 'getIndex',
      tags: ['info'],
      summary: 'The open index - its directory, manifest and sentence count.',
      responses: {
        '200': {
          description: 'Facts of the open index.',
          content: {
            'application/json': {
              schema: IndexInfo,
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/v1/domains': {
    get: {
      operationId: 'listDomains',
      tags: ['info'],
      summary: 'The domains of the open index (paramine domain add), with their σ distributions.',
      description: md(
        'What a `domain` in a search or a job can name. `current` is false for a domain scored on an',
        'earlier build of the index (using it is a 409 until it is added again).',
        '',
      ),
      responses: {
        '200': {
          description: 'Every domain of the index.',
          content: {
            'application/json': {
              schema: DomainList,
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapiJson',
      tags: ['info'],
      summary: 'This document, as JSON.',
      description: 'Generated from the route schemas (src/server/contract/); the same as `/openapi.yaml`.',
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document of this service.',
          content: { 'application/json': { schema: openApiShape } },
        },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '500': { $ref: '#/components/responses/Internal' },
      },
    },
  },
  '/openapi.yaml': {
    get: {
      operationId: 'openapi',
      tags: ['info'],
      summary: 'This document.',
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document of this service (the committed openapi.yaml).',
          content: { 'application/yaml': { schema: openApiShape } },
        },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '500': { $ref: '#/components/responses/Internal' },
      },
    },
  },
};
