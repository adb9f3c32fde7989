/**
 * Named Bearer API keys. Every route plugin adds the hook for its access level:
 * - `open`: never asks (health probes);
 * - `read`: asks only when the service runs with `protectAll` (`--auth-all`);
 * - `write`: asks whenever a key is configured (starting and cancelling jobs, anything that changes state).
 * A key that is sent is always checked, even where none is needed, and the name of the matching key is
 * `req.apiKeyName` (null when none was sent) — what handlers record as the author of a change.
 * Keys are compared as sha256 digests in constant time, against every key, so timing tells nothing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ParamineError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the API key the request carried (checked), or null when it carried none. */
    apiKeyName: string | null;
  }
}

export interface ApiKey {
  /** Who holds the key: shown in logs and recorded as the author of changes, never secret. */
  name: string;
  key: string;
}

export interface AuthOptions {
  keys: readonly ApiKey[];
  /** Ask for a key on `read` routes too. */
  protectAll: boolean;
}

export type Access = 'open' | 'read' | 'write';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export class ApiKeys {
  readonly #keys: ReadonlyArray<{ name: string; digest: Buffer }>;
  readonly #protectAll: boolean;

  constructor(options: AuthOptions = { keys: [], protectAll: false }) {
    this.#keys = options.keys.map((k) => ({ name: k.name, digest: digest(k.key) }));
    this.#protectAll = options.protectAll;
  }

  /** Whether any key is configured (then write routes need one). */
  get configured(): boolean {
    return this.#keys.length > 0;
  }

  /** Whether read routes need a key too (`--auth-all`). */
  get protectAll(): boolean {
    return this.#protectAll;
  }

  /** Adds `req.apiKeyName` to every request of the app (null until a hook sets it). */
  static decorate(app: FastifyInstance): void {
    app.decorateRequest('apiKeyName', null);
  }

  /** The name of the key `given` is, if any (every key is compared, in constant time). */
  nameOf(given: string): string | undefined {
    const g = digest(given);
    let name: string | undefined;
    for (const k of this.#keys) if (timingSafeEqual(k.digest, g) && name === undefined) name = k.name;
    return name;
  }

  /** The onRequest hook of one access level. */
  require(access: Access): onRequestAsyncHookHandler {
    return async (req: FastifyRequest) => {
      if (access === 'open' || this.#keys.length === 0) return;
      const header = req.headers.authorization;
      const needed = access === 'write' || this.#protectAll;
      if (header === undefined && !needed) return;
      const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
      const name = m ? this.nameOf((m[1] as string).trim()) : undefined;
      if (name === undefined) {
        throw new ParamineError(
          'UNAUTHORIZED',
          'missing or wrong API key: send "Authorization: Bearer <key>"',
          {
            field: 'authorization',
          },
        );
      }
      req.apiKeyName = name;
    };
  }
}
