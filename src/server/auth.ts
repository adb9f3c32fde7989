/**
 * Bearer API keys. With a key configured, write and admin routes need it; with `protectAll`, every
 * route but the health probes does. Compared in constant time.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ParamineError } from '../errors.js';

export interface AuthOptions {
  apiKeys: readonly string[];
  protectAll: boolean;
}

const OPEN_ALWAYS = new Set(['/healthz', '/readyz']);

function matches(given: string, keys: readonly string[]): boolean {
  const g = Buffer.from(given);
  // Check every key so timing does not tell which one nearly matched.
  return keys.reduce((ok, k) => {
    const b = Buffer.from(k);
    return (b.length === g.length && timingSafeEqual(b, g)) || ok;
  }, false);
}

/** A preHandler for one route; `admin` marks write/admin routes. */
export function requireKey(options: AuthOptions, admin: boolean) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (options.apiKeys.length === 0) return;
    if (!admin && !options.protectAll) return;
    if (OPEN_ALWAYS.has(req.url.split('?')[0] ?? '')) return;
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m || !matches((m[1] as string).trim(), options.apiKeys)) {
      throw new ParamineError(
        'UNAUTHORIZED',
        'missing or wrong API key: send "Authorization: Bearer <key>"',
        {
          field: 'authorization',
        },
      );
    }
  };
}
