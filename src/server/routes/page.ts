/**
 * The web page's route plugins: its config, the annotations (when the service has a store for them),
 * live job progress (when it runs jobs) and the page itself. Each registers its own auth hooks.
 */
import type { RoutePlugin } from '../context.js';
import { annotationRoutes } from './annotations.js';
import { configRoutes } from './config.js';
import { jobEventRoutes } from './job-events.js';
import { webRoutes } from './web.js';

export const pageRoutes: RoutePlugin = async (app, opts) => {
  await app.register(configRoutes, opts);
  if (opts.ctx.annotations) await app.register(annotationRoutes, opts);
  if (opts.ctx.jobs) await app.register(jobEventRoutes, opts);
  await app.register(webRoutes, opts);
};
