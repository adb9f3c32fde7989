/**
 * What a client (the web page) needs to know before it asks anything: whether the service has API keys
 * and for what, the cross-encoder's labels, the annotation schemes, the search defaults and limits, the
 * job presets. GET /v1/whoami checks a key and names it.
 */
import { SCHEME_INFO } from '../../annotations/index.js';
import { FILTER_PRESETS } from '../../jobs/index.js';
import { DEFAULT_K } from '../../search/types.js';
import { detectScheme } from '../../text/labels.js';
import type { AppContext, RoutePlugin } from '../context.js';

export const configRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  app.get('/v1/config', { onRequest: auth.require('read') }, async () => {
    const labels = ctx.service.core.canRerank ? ctx.service.core.labels : undefined;
    return {
      auth: { keys: auth.configured, protectAll: auth.protectAll },
      reranker: labels === undefined ? null : { labels: [...labels] },
      // The scheme the cross-encoder labels in (read from its label names), else binary.
      annotation: {
        schemes: SCHEME_INFO,
        default: labels !== undefined && detectScheme(labels).name === 'turku' ? 'turku' : 'binary',
      },
      search: {
        defaults: { k: DEFAULT_K, rerank: labels !== undefined, nprobe: defaultNprobe(ctx) },
        ivf: /IVF/.test(ctx.service.indexInfo().manifest.factory),
        limits: ctx.limits,
      },
      jobs: { presets: FILTER_PRESETS },
    };
  });

  // A write-level check whatever the route does, so the page can tell a wrong key at once.
  app.get('/v1/whoami', { onRequest: auth.require('write') }, async (req) => ({
    keys: auth.configured,
    name: req.apiKeyName,
  }));
};

function defaultNprobe(ctx: AppContext): number | null {
  return ctx.service.indexInfo().manifest.search.nprobe ?? null;
}
