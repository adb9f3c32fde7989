/**
 * The fastify app: error shape, metrics and the route plugins over one AppContext. Each plugin is an
 * encapsulated scope with its own auth hook (see auth.ts). Built without listening, so tests drive it
 * through inject() and `paramine serve` through listen().
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { ApiKeys, type AuthOptions } from './auth.js';
import { type AppContext, DEFAULT_BODY_LIMIT, type RoutePlugin } from './context.js';
import { installDeadlines } from './deadlines.js';
import { installErrorHandling } from './errors.js';
import { healthRoutes, infoRoutes } from './routes/info.js';
import { jobRoutes } from './routes/jobs.js';
import { pageRoutes } from './routes/page.js';
import { searchRoutes } from './routes/search.js';
import { writeRoutes } from './routes/writes.js';

export interface ServedRoute {
  method: string;
  url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    servedRoutes: ServedRoute[];
  }
}

export interface AppOptions {
  auth?: AuthOptions;
  bodyLimit?: number;
  requestTimeoutMs?: number;
  logger?: boolean | { level: string };
  /** More route plugins (registered like the built-in ones, with `{ ctx, auth }`). */
  plugins?: RoutePlugin[];
}

export function buildApp(ctx: AppContext, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    // Malformed URLs (bad percent-encoding) get the same error shape as everything else.
    frameworkErrors: (e, _req, reply) => {
      void (reply as FastifyReply).code(400).send({ code: 'BAD_INPUT', message: e.message });
    },
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Socket level: the whole request must arrive in time (slow-loris bodies)...
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    // Sentence ids and paths are case-sensitive; trailing slashes are a common client slip.
    routerOptions: { ignoreTrailingSlash: true },
  });
  installErrorHandling(app);
  // ...and application level: a response not sent in time is a 503 TIMEOUT (streaming routes aside).
  installDeadlines(app, options.requestTimeoutMs ?? 30_000);
  // The served routes as fastify registers them: the contract test compares them with the OpenAPI document.
  const routes: ServedRoute[] = [];
  app.decorate('servedRoutes', routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  // A JSON API: other bodies are 415, not strings that fail validation later.
  app.removeContentTypeParser('text/plain');
  // Many clients send `content-type: application/json` on every request: a DELETE or GET without a body is
  // not a malformed JSON body (fastify would refuse it with "Body cannot be empty").
  app.addHook('onRequest', (req, _reply, done) => {
    const empty =
      req.headers['content-length'] === '0' ||
      (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
    if (empty && (req.method === 'DELETE' || req.method === 'GET')) delete req.headers['content-type'];
    done();
  });
  ApiKeys.decorate(app);
  const auth = new ApiKeys(options.auth);
  ctx.metrics.install(app);
  const plugins: RoutePlugin[] = [
    healthRoutes,
    ctx.metrics.routes,
    infoRoutes,
    writeRoutes,
    searchRoutes,
    ...(ctx.jobs ? [jobRoutes] : []),
    pageRoutes,
    ...(options.plugins ?? []),
  ];
  for (const plugin of plugins) void app.register(plugin, { ctx, auth });
  return app;
}
