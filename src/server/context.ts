/** What the route plugins get: the service, limits, metrics, the job manager and the API keys. */
import type { FastifyPluginAsync } from 'fastify';
import type { AnnotationStore } from '../annotations/index.js';
import type { Jobs, Service } from '../service/index.js';
import type { ApiKeys } from './auth.js';
import type { Metrics } from './metrics.js';

export interface Limits {
  maxTexts: number;
  maxTextChars: number;
  maxK: number;
  maxCandidates: number;
  maxPairs: number;
  /** Most (query, candidate) pairs one search request may send to the cross-encoder. */
  maxRerankPairs: number;
  /** Longest pause before a refused connection's next request is read (0: none; pacing.ts). */
  refusalPaceMs: number;
}

/** Largest request body (AppOptions.bodyLimit). */
export const DEFAULT_BODY_LIMIT = 1 << 20;

export const DEFAULT_LIMITS: Limits = {
  maxTexts: 64,
  maxTextChars: 2000,
  maxK: 100,
  maxCandidates: 500,
  maxPairs: 256,
  maxRerankPairs: 2000,
  refusalPaceMs: 250,
};

export interface AppContext {
  /** The parts of the service the routes use. */
  service: Pick<
    Service,
    | 'core'
    | 'store'
    | 'indexInfo'
    | 'readiness'
    | 'writes'
    | 'domains'
    | 'context'
    | 'labelCuts'
    | 'sentenceId'
  >;
  limits: Limits;
  metrics: Metrics;
  /** The job manager behind /v1/jobs; without it those routes are not served. */
  jobs?: Jobs | undefined;
  /** The web page's pair annotations; without it /v1/annotations is not served. */
  annotations?: AnnotationStore | undefined;
  /** The front end's own readiness checks (e.g. `serving: false` while shutting down). */
  readiness?: (() => Record<string, boolean>) | undefined;
}

/** What every route plugin is registered with: `app.register(plugin, { ctx, auth })`. */
export interface RoutePluginOptions {
  ctx: AppContext;
  /** `auth.require('read' | 'write' | 'open')` is the plugin's onRequest hook. */
  auth: ApiKeys;
}

export type RoutePlugin = FastifyPluginAsync<RoutePluginOptions>;
