/** The error responses the operations share (components.responses) and the security scheme. */
import type { ZodOpenApiComponentsObject } from 'zod-openapi';
import { md } from './md.js';
import {
  ApiError,
  BadInputError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnavailableError,
  UnsupportedMediaTypeError,
} from './schemas/errors.js';

export const sharedComponents: ZodOpenApiComponentsObject = {
  securitySchemes: {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description: md(
        'One of the named API keys given to `paramine serve --api-keys-file` or `PARAMINE_API_KEYS` (at',
        'least 8 characters, no whitespace).',
        '',
      ),
    },
  },
  responses: {
    BadInput: {
      description: md(
        'The request is malformed: invalid JSON, an empty body, a field of the wrong type or out of',
        'range, an unknown field, a missing or conflicting field. `field` names the first offending',
        'field when there is one (`body` when the body as a whole is wrong).',
        '',
      ),
      content: {
        'application/json': {
          schema: BadInputError,
          example: {
            code: 'BAD_INPUT',
            message: 'k: at most 100',
            field: 'k',
          },
        },
      },
    },
    Unauthorized: {
      description: 'A Bearer key is required here and was missing or wrong.',
      content: {
        'application/json': {
          schema: UnauthorizedError,
          example: {
            code: 'UNAUTHORIZED',
            message: 'missing or wrong API key: send "Authorization: Bearer <key>"',
            field: 'authorization',
          },
        },
      },
    },
    DomainConflict: {
      description:
        'The domain named was scored on another build of the index (run paramine domain add again).',
      content: {
        'application/json': {
          schema: ApiError,
          example: {
            code: 'CONFLICT',
            message:
              "domain 'science' was scored on another build of this index; run paramine domain add again",
            field: 'domain.name',
          },
        },
      },
    },
    NotFound: {
      description: 'No such sentence, job, index or domain.',
      content: {
        'application/json': {
          schema: NotFoundError,
          example: {
            code: 'NOT_FOUND',
            message: 'no sentence with id 99999',
            field: 'id',
          },
        },
      },
    },
    PayloadTooLarge: {
      description: "The request body exceeds the service's limit (1 MiB by default).",
      content: {
        'application/json': {
          schema: PayloadTooLargeError,
          example: {
            code: 'PAYLOAD_TOO_LARGE',
            message: 'Request body is too large',
          },
        },
      },
    },
    UnsupportedMediaType: {
      description: 'The request has a body whose Content-Type is not `application/json`.',
      content: {
        'application/json': {
          schema: UnsupportedMediaTypeError,
          example: {
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: 'Unsupported Media Type',
          },
        },
      },
    },
    Unavailable: {
      description: md(
        'The service cannot answer this now: no cross-encoder is loaded (classify), the index or a',
        'model is closed because the service is shutting down, or (`OVERLOADED`, with a `Retry-After`',
        "header) the encoder's or the cross-encoder's queue is full. The queues are bounded",
        '(`--queue-max` texts, `--rerank-queue-max` pairs) so that a burst is refused at once instead of',
        'waiting longer than any client would; retry after the given number of seconds.',
        '',
      ),
      headers: {
        'Retry-After': {
          description: 'Seconds until the queue is expected to have room (OVERLOADED only).',
          schema: { type: 'integer', minimum: 1 },
        },
      },
      content: {
        'application/json': {
          schema: UnavailableError,
          example: {
            code: 'UNAVAILABLE',
            message: 'no cross-encoder loaded; start the service with --reranker DIR',
          },
        },
      },
    },
    Internal: {
      description: 'An unexpected failure; details are in the server log, not in the response.',
      content: {
        'application/json': {
          schema: InternalError,
          example: {
            code: 'INTERNAL',
            message: 'internal error; see the server log',
          },
        },
      },
    },
  },
};

/** The shared error responses (components.responses above) by status code. */
const ERRORS = {
  '400': 'BadInput',
  '401': 'Unauthorized',
  '404': 'NotFound',
  '409': 'DomainConflict',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '500': 'Internal',
  '503': 'Unavailable',
} as const;

/** References to the shared error responses an operation answers with. */
export const errors = (...codes: Array<keyof typeof ERRORS>): Record<string, { $ref: string }> =>
  Object.fromEntries(codes.map((c) => [c, { $ref: `#/components/responses/${ERRORS[c]}` }]));
