/** The error bodies every route may answer with (ParamineError codes, src/errors.ts). */
import { z } from 'zod';

export const ApiError = z
  .strictObject({
    code: z
      .enum([
        'BAD_INPUT',
        'UNAUTHORIZED',
        'NOT_FOUND',
        'FILE_NOT_FOUND',
        'CONFLICT',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'RATE_LIMITED',
        'OVERLOADED',
        'UNAVAILABLE',
        'INDEX_CLOSED',
        'FAISS_ERROR',
        'MODEL_MISSING_FILE',
        'INTERNAL',
      ])
      .describe('Stable machine-readable error code.'),
    message: z.string().describe('What went wrong, for people.'),
    field: z
      .string()
      .describe('The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).')
      .optional(),
  })
  .meta({ id: 'Error', description: 'Every error response has this shape.' });

export const BadInputError = ApiError.extend({ code: z.enum(['BAD_INPUT', 'FILE_NOT_FOUND']) }).meta({
  id: 'BadInputError',
});

export const UnauthorizedError = ApiError.extend({
  code: z.literal('UNAUTHORIZED'),
  field: z.literal('authorization'),
}).meta({ id: 'UnauthorizedError' });

export const NotFoundError = ApiError.extend({ code: z.literal('NOT_FOUND') }).meta({ id: 'NotFoundError' });

export const PayloadTooLargeError = ApiError.extend({ code: z.literal('PAYLOAD_TOO_LARGE') }).meta({
  id: 'PayloadTooLargeError',
});

export const UnsupportedMediaTypeError = ApiError.extend({ code: z.literal('UNSUPPORTED_MEDIA_TYPE') }).meta({
  id: 'UnsupportedMediaTypeError',
});

export const UnavailableError = ApiError.extend({
  code: z.enum(['UNAVAILABLE', 'INDEX_CLOSED', 'OVERLOADED']),
}).meta({ id: 'UnavailableError' });

export const InternalError = ApiError.extend({
  code: z.enum(['INTERNAL', 'FAISS_ERROR', 'MODEL_MISSING_FILE']),
}).meta({ id: 'InternalError' });
