/**
 * One error shape for every route: {code, message, field?}. ParamineErrors keep their status; fastify's
 * own errors (bad JSON, body too large, unsupported media type) keep theirs with a stable code; anything
 * else is a 500 that hides internals from the client and is logged in full.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { isParamineError } from '../errors.js';

const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_INPUT',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_INPUT',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_INPUT',
  FST_ERR_VALIDATION: 'BAD_INPUT',
};

const EXPECTED = new Set(['UNAVAILABLE', 'OVERLOADED', 'ABORTED']);

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (isParamineError(err)) {
      // Expected answers, not faults: no reranker loaded, too busy, the client left.
      if (err.status >= 500 && !EXPECTED.has(err.code)) req.log.error({ err }, err.message);
      if (err.retryAfterSeconds !== undefined)
        void reply.header('retry-after', String(err.retryAfterSeconds));
      return reply.status(err.status).send(err.toJSON());
    }
    const status = err.statusCode ?? 500;
    if (status < 500) {
      const code = FASTIFY_CODES[err.code] ?? (status === 429 ? 'RATE_LIMITED' : 'BAD_INPUT');
      return reply.status(status).send({ code, message: err.message });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ code: 'INTERNAL', message: 'internal error; see the server log' });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ code: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );
}
