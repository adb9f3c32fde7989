/**
 * The fastify app: error shape, auth, metrics and routes over one ServiceContext. Built without
 * listening, so tests drive it through inject() and `paramine serve` through listen().
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { type AuthOptions, requireKey } from './auth.js';
import type { ServiceContext } from './context.js';
import { installErrorHandling } from './errors.js';
import { Metrics } from './metrics.js';
import { infoRoutes } from './routes/info.js';
import { searchRoutes } from './routes/search.js';

export interface AppOptions {
  auth?: AuthOptions;
  bodyLimit?: number;
  requestTimeoutMs?: number;
  logger?: boolean | { level: string };
  /** Extra route plugins (jobs), registered after auth is in place. */
  plugins?: Array<(app: FastifyInstance, ctx: ServiceContext) => void>;
}

export function buildApp(ctx: ServiceContext, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    // Malformed URLs (bad percent-encoding) get the same error shape as everything else.
    frameworkErrors: (e, _req, reply) => {
      void (reply as FastifyReply).code(400).send({ code: 'BAD_INPUT', message: e.message });
    },
    bodyLimit: options.bodyLimit ?? 1 << 20,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    // Sentence ids and paths are case-sensitive; trailing slashes are a common client slip.
    routerOptions: { ignoreTrailingSlash: true },
  });
  installErrorHandling(app);
  // A JSON API: other bodies are 415, not strings that fail validation later.
  app.removeContentTypeParser('text/plain');
  const auth = options.auth ?? { apiKeys: [], protectAll: false };
  // Every route is read-only but for the ones plugins mark admin; protectAll covers the rest.
  app.addHook('onRoute', (route) => {
    const admin =
      route.method !== 'GET' &&
      route.method !== 'HEAD' &&
      !['/v1/search', '/v1/classify'].includes(route.url);
    const hook = requireKey(auth, admin);
    const existing = route.preHandler;
    route.preHandler =
      existing === undefined ? [hook] : Array.isArray(existing) ? [hook, ...existing] : [hook, existing];
  });

  const metrics = ctx.metrics ?? new Metrics();
  ctx.metrics = metrics;
  metrics.install(app);
  searchRoutes(app, ctx);
  infoRoutes(app, ctx);
  for (const plugin of options.plugins ?? []) plugin(app, ctx);
  return app;
}
