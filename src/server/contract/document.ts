/**
 * The OpenAPI 3.1 document, generated from the route schemas (zod, with their descriptions and examples)
 * by zod-openapi: served at /openapi.json and /openapi.yaml, and written to the committed openapi.yaml by
 * `npm run openapi` (a test fails when the two differ).
 */
import { stringify } from 'yaml';
import { createDocument, type ZodOpenApiObject } from 'zod-openapi';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIMITS } from '../context.js';
import { sharedComponents } from './components.js';
import { md } from './md.js';
import { annotationsPaths } from './paths/annotations.js';
import { infoPaths } from './paths/info.js';
import { jobsPaths } from './paths/jobs.js';
import { opsPaths } from './paths/ops.js';
import { searchPaths } from './paths/search.js';
import { webPaths } from './paths/web.js';

const L = DEFAULT_LIMITS;

const description = md(
  'Top-k nearest neighbours of a sentence from a FAISS IVF-PQ index built with an SBERT encoder,',
  'reranked by a cross-encoder classifier and returned as labeled paraphrase candidates.',
  '',
  '**Errors** are JSON objects with a stable `code`, a human-readable `message` and, when one field',
  'is at fault, `field` (a path such as `texts[3]` or `filter.bleuMin`). Request bodies are checked',
  'strictly: unknown fields are a 400.',
  '',
  '**Authentication.** Bearer keys, each with a name (who holds it; recorded as the author of what the',
  'key changes, e.g. an annotation): `paramine serve --api-keys-file FILE` (one `name:key` a line) or env',
  '`PARAMINE_API_KEYS="alice:KEY1,bob:KEY2"`. (`--api-key KEY` and env `PARAMINE_API_KEY` still work',
  'but are unnamed, and a key in the arguments is visible to every user of the machine through `ps`.)',
  'Without a key every route is open. With keys, write routes need one: starting and cancelling jobs',
  '(`POST /v1/jobs`, `DELETE /v1/jobs/{id}`), writing and removing annotations (`POST /v1/annotations`,',
  '`DELETE /v1/annotations/{id}`); `GET /v1/whoami` always checks it. The other routes are reads',
  '(search and classify count as reads), so they stay open unless the service runs with `--auth-all`,',
  'which requires a key on every route but `/healthz`, `/readyz` and the web page (`/`, `/assets/*`,',
  '`/vendor/*`: the page then asks for the key and sends it). A key that is sent is checked even where',
  'none is needed.',
  'A missing or wrong key is a 401 `UNAUTHORIZED` with `field: authorization`.',
  '',
  '**Overload.** Concurrent requests are batched for the models; when a model’s queue is full, or the',
  'wait it predicts for a request is past `--wait-budget-ms`, a search or classify request is refused at',
  'once with 503 `OVERLOADED` and a `Retry-After` header; the refused connection’s next request is then',
  'read only after a pause (50 ms, doubling while refusals continue, up to `--refusal-pace-ms`). A request',
  'admitted is not refused later. The refusal comes before the body is validated (a search',
  'that reranks, when the cross-encoder could not take one pair) or before it is read (the encoder, and',
  'classify), so a request refused under load may be one that a later try answers with a 400.',
  '',
  `**Limits** (defaults of \`paramine serve\`): request bodies up to ${DEFAULT_BODY_LIMIT / (1 << 20)} MiB, at most ${L.maxTexts} texts and`,
  `${L.maxPairs} pairs per request, texts of at most ${L.maxTextChars} characters (UTF-16 code units), \`k\` at most ${L.maxK},`,
  `\`candidates\` at most ${L.maxCandidates}.`,
  '',
);

const spec: ZodOpenApiObject = {
  openapi: '3.1.0',
  jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
  info: {
    title: 'paramine',
    version: '0.1.0',
    summary: 'Paraphrase mining over very large sentence collections.',
    description,
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  servers: [{ url: 'http://127.0.0.1:8080' }],
  tags: [
    { name: 'search', description: 'Paraphrase search and pair classification.' },
    { name: 'info', description: 'Sentences, the open index, the contract.' },
    { name: 'jobs', description: 'Bulk mining jobs - persistent, resumable, streamed results.' },
    { name: 'ops', description: 'Health, readiness and metrics.' },
    { name: 'annotations', description: 'Pair labels from the web page, exported for training.' },
    { name: 'web', description: 'The web page and what it asks first.' },
  ],
  // Open by default; with --auth-all a Bearer key is needed. Health probes override this with [].
  security: [{}, { bearerAuth: [] }],
  paths: { ...searchPaths, ...jobsPaths, ...infoPaths, ...opsPaths, ...annotationsPaths, ...webPaths },
  components: sharedComponents,
};

let cached: { json: object; yaml: string } | undefined;

/** The document as an object and as YAML (built once: the schemas do not change while the process runs). */
export function openApiDocument(): { json: object; yaml: string } {
  if (cached === undefined) {
    const json = createDocument(spec);
    cached = { json, yaml: stringify(json, { lineWidth: 0 }) };
  }
  return cached;
}

/** The committed openapi.yaml: the document under a line saying where it comes from. */
export const committedOpenApi = (): string =>
  `# Generated by \`npm run openapi\` from src/server/contract/ - do not edit.\n${openApiDocument().yaml}`;
