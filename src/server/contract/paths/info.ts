/** The info routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import { addSentencesRequest, deleteSentencesRequest, sentenceIdParams, sentenceQuery } from '../requests.js';
import { ApiError } from '../schemas/errors.js';
import { AddedSentences, DeletedSentence, DeletedSentences, IndexInfo, Sentence } from '../schemas/info.js';
import { DomainList } from '../schemas/jobs.js';

/** A user's id (a record's, a write's) that several sentences carry. */
const sharedUserId = {
  '409': {
    description: 'The id the user gave names several sentences; the message lists their index ids.',
    content: {
      'application/json': {
        schema: ApiError,
        example: {
          code: 'CONFLICT',
          message: 'the id twin names 2 sentences (3, 4); use one of their index ids',
          field: 'id',
        },
      },
    },
  },
};

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
        ...sharedUserId,
      },
    },
    delete: {
      operationId: 'deleteSentence',
      tags: ['info'],
      summary: 'Deletes a sentence: gone from every search from the answer on (a tombstone, durable).',
      security: [{}, { bearerAuth: [] }],
      requestParams: { path: sentenceIdParams },
      responses: {
        '200': {
          description: 'Deleted (or deleted before).',
          content: { 'application/json': { schema: DeletedSentence, example: { id: 5, deleted: true } } },
        },
        ...errors('400', '401', '404', '500'),
        ...sharedUserId,
      },
    },
  },
  '/v1/sentences': {
    post: {
      operationId: 'addSentences',
      tags: ['info'],
      summary: 'Adds sentences to the serving index: searchable, and on disk, when the answer comes.',
      description: md(
        'Texts are normalized and de-duplicated as the build does; new ones are embedded, written in one',
        'durable transaction, and put into an exact segment beside the built shards, so they are found by the',
        'next search. Needs an API key when the service has keys.',
      ),
      security: [{}, { bearerAuth: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: addSentencesRequest } } },
      responses: {
        '200': {
          description: 'What became of each sentence, in order.',
          content: {
            'application/json': {
              schema: AddedSentences,
              example: { sentences: [{ id: 1446, status: 'added', clientId: 'feed-1' }], seq: 3 },
            },
          },
        },
        ...errors('400', '401', '404', '413', '500', '503'),
      },
    },
  },
  '/v1/sentences/delete': {
    post: {
      operationId: 'deleteSentences',
      tags: ['info'],
      summary: 'Deletes sentences by id or by metadata (a takedown of a source): one durable write.',
      description: md(
        'With `where`, every live sentence (built or added) whose metadata matches is deleted: gone from',
        'searches, job results and exports from the answer on. A scan of the store: meant for an operator,',
        'not for every request. Needs an API key when the service has keys.',
      ),
      security: [{}, { bearerAuth: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: deleteSentencesRequest } } },
      responses: {
        '200': {
          description: 'What was deleted.',
          content: {
            'application/json': {
              schema: DeletedSentences,
              example: { deleted: 2, ids: [17, 1446], seq: 9 },
            },
          },
        },
        ...errors('400', '401', '413', '500'),
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
