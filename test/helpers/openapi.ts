/**
 * The OpenAPI contract (openapi.yaml) as a test oracle: find the operation for a concrete request path,
 * the response for a status and media type, and validate a body against the spec's own schema with
 * ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses). No hand-written shape checks: the spec is the truth.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

export const SPEC_FILE = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type Method = (typeof METHODS)[number];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

interface Operation {
  method: Method;
  /** Path template as the spec writes it: /v1/sentences/{id}. */
  path: string;
  pointer: string;
  op: JsonObject;
  match: RegExp;
  literal: boolean;
}

const isObject = (x: Json | undefined): x is JsonObject =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** JSON Pointer token escaping (RFC 6901). */
const esc = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

function templateRegExp(template: string): RegExp {
  const parts = template
    .split(/(\{[^}/]+\})/)
    .map((p) => (/^\{[^}/]+\}$/.test(p) ? '([^/]+)' : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('')}$`);
}

class Contract {
  readonly spec: JsonObject;
  readonly operations: Operation[];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(file: string) {
    const doc = parse(readFileSync(file, 'utf8')) as Json;
    if (!isObject(doc)) throw new Error(`${file}: not a YAML mapping`);
    this.spec = doc;
    this.ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    // OpenAPI's own schema annotations (3.1 base vocabulary), so strict mode accepts them.
    for (const k of ['example', 'discriminator', 'xml', 'externalDocs']) this.ajv.addKeyword(k);
    // The two top-level members kept in the schema resource below (never validated themselves).
    for (const k of ['components', 'paths']) this.ajv.addKeyword(k);
    // ajv-formats is CJS: its default export arrives wrapped under some loaders.
    const addFormats = (
      'default' in addFormatsModule ? (addFormatsModule as { default: unknown }).default : addFormatsModule
    ) as (a: Ajv2020) => Ajv2020;
    addFormats(this.ajv);
    // The whole document under one id; response schemas are compiled as $refs into it, so
    // `#/components/schemas/X` references resolve against the spec itself.
    this.ajv.addSchema(
      { components: doc.components ?? {}, paths: doc.paths ?? {} } as object,
      'openapi',
      false,
    );
    this.operations = [];
    const paths = doc.paths;
    if (!isObject(paths)) return;
    for (const [path, item] of Object.entries(paths)) {
      if (!isObject(item)) continue;
      for (const method of METHODS) {
        const op = item[method];
        if (!isObject(op)) continue;
        this.operations.push({
          method,
          path,
          pointer: `/paths/${esc(path)}/${method}`,
          op,
          match: templateRegExp(path),
          literal: !path.includes('{'),
        });
      }
    }
  }

  /** The operation for a concrete path; literal paths win over templated ones (OpenAPI 3.1, 4.8.8). */
  find(method: string, urlPath: string): Operation | undefined {
    const m = method.toLowerCase();
    let p = urlPath.split('?')[0] ?? '';
    // The service ignores one trailing slash.
    if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
    const candidates = this.operations.filter((o) => o.method === m && o.match.test(p));
    return candidates.find((o) => o.literal) ?? candidates[0];
  }

  /** Follows a local `$ref` (responses may be references to components/responses). */
  deref(node: Json | undefined, pointer: string): { node: Json | undefined; pointer: string } {
    let n = node;
    let ptr = pointer;
    for (let hops = 0; isObject(n) && typeof n.$ref === 'string' && hops < 16; hops++) {
      const ref = n.$ref;
      if (!ref.startsWith('#/')) throw new Error(`openapi.yaml: only local $refs are supported (${ref})`);
      ptr = ref.slice(1);
      n = this.at(ptr);
    }
    return { node: n, pointer: ptr };
  }

  at(pointer: string): Json | undefined {
    let n: Json | undefined = this.spec;
    for (const raw of pointer.split('/').slice(1)) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      n = isObject(n) ? n[key] : Array.isArray(n) ? n[Number(key)] : undefined;
    }
    return n;
  }

  validator(schemaPointer: string): ValidateFunction {
    let v = this.compiled.get(schemaPointer);
    if (v === undefined) {
      v = this.ajv.compile({ $ref: `openapi#${schemaPointer.split('/').map(encodeURIComponent).join('/')}` });
      this.compiled.set(schemaPointer, v);
    }
    return v;
  }
}

let contract: Contract | undefined;
function load(): Contract {
  contract ??= new Contract(SPEC_FILE);
  return contract;
}

/** The parsed openapi.yaml. */
export function loadSpec(): Record<string, unknown> {
  return load().spec;
}

/** Every (METHOD, path template) the spec documents, e.g. ['GET', '/v1/sentences/{id}']. */
export function routesInSpec(): Array<{ method: string; path: string }> {
  return load().operations.map((o) => ({ method: o.method.toUpperCase(), path: o.path }));
}

/** `/v1/sentences/{id}` -> `/v1/sentences/:id` (fastify's syntax). */
export function toFastifyPath(template: string): string {
  return template.replace(/\{([^}/]+)\}/g, ':$1');
}

/** A Content-Type header as inject() or fetch() gives it (fastify's type allows arrays and numbers). */
export type ContentTypeHeader = string | number | string[] | null | undefined;

function mediaType(contentType: ContentTypeHeader): string {
  const h = Array.isArray(contentType) ? contentType[0] : contentType;
  return (
    String(h ?? '')
      .split(';')[0]
      ?.trim()
      .toLowerCase() ?? ''
  );
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
          : e.keyword === 'enum' || e.keyword === 'const'
            ? ` ${JSON.stringify(e.params)}`
            : '';
      return `  ${e.instancePath || '(body)'} ${e.message ?? e.keyword}${extra} [${e.schemaPath}]`;
    })
    .join('\n');
}

function preview(body: unknown): string {
  const s = typeof body === 'string' ? body : JSON.stringify(body);
  return s === undefined ? String(body) : s.length > 400 ? `${s.slice(0, 400)}…` : s;
}

/**
 * Validates one response against openapi.yaml and throws a readable Error when the route, the status
 * or the media type is not documented, or the body does not match the schema.
 *
 * @param method HTTP method (any case)
 * @param path the concrete request path, e.g. `/v1/sentences/5` (a query string is ignored)
 * @param status the response status code
 * @param contentType the response's Content-Type header (parameters such as charset are ignored)
 * @param body the body: a parsed value, or the raw text (parsed as JSON for JSON media types)
 */
export function validateResponse(
  method: string,
  path: string,
  status: number,
  contentType: ContentTypeHeader,
  body: unknown,
): void {
  const c = load();
  const where = `${method.toUpperCase()} ${path} -> ${status}`;
  const op = c.find(method, path);
  if (op === undefined) throw new Error(`${where}: no operation for this method and path in openapi.yaml`);
  const responses = op.op.responses;
  if (!isObject(responses)) throw new Error(`${where}: ${op.path} documents no responses`);
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
  if (key === undefined) {
    throw new Error(
      `${where}: status ${status} is not documented for ${op.method.toUpperCase()} ${op.path} ` +
        `(documented: ${Object.keys(responses).join(', ')}); body: ${preview(body)}`,
    );
  }
  const { node: response, pointer } = c.deref(responses[key], `${op.pointer}/responses/${esc(key)}`);
  if (!isObject(response)) throw new Error(`${where}: response ${key} is not an object in openapi.yaml`);
  const content = response.content;
  if (!isObject(content)) {
    if (body === undefined || body === '' || body === null) return;
    throw new Error(`${where}: openapi.yaml documents no body for this response, got ${preview(body)}`);
  }
  const mt = mediaType(contentType);
  const mtKey = [mt, `${mt.split('/')[0]}/*`, '*/*'].find((k) => k in content);
  if (mtKey === undefined) {
    throw new Error(
      `${where}: Content-Type ${JSON.stringify(contentType)} is not documented (documented: ${Object.keys(content).join(', ')})`,
    );
  }
  const media = content[mtKey];
  if (!isObject(media) || media.schema === undefined) return;
  let value = body;
  const isJson = mt === 'application/json' || mt.endsWith('+json');
  if (isJson && (typeof body === 'string' || Buffer.isBuffer(body))) {
    try {
      value = JSON.parse(body.toString());
    } catch (e) {
      throw new Error(
        `${where}: body is not valid JSON (${(e as Error).message}): ${preview(body.toString())}`,
      );
    }
  } else if (
    /^application\/(?:[\w.-]+\+)?yaml$/.test(mt) &&
    (typeof body === 'string' || Buffer.isBuffer(body))
  ) {
    value = parse(body.toString());
  } else if (Buffer.isBuffer(body)) {
    value = body.toString();
  }
  const validate = c.validator(`${pointer}/content/${esc(mtKey)}/schema`);
  if (mt === 'application/x-ndjson') {
    // A stream of JSON lines: the schema describes each line.
    const lines = String(value)
      .split('\n')
      .filter((l) => l !== '');
    lines.forEach((line, i) => {
      if (!validate(JSON.parse(line))) {
        throw new Error(
          `${where}: line ${i + 1} does not match the schema:\n${describe(validate.errors)}\nline: ${preview(line)}`,
        );
      }
    });
    return;
  }
  if (mt === 'text/event-stream') {
    // Server-sent events: the schema describes each event (its fields as text), as schemathesis reads it.
    const events = String(value)
      .split(/\n\n+/)
      .map((block) =>
        Object.fromEntries(
          block
            .split('\n')
            .filter((l) => l !== '' && !l.startsWith(':'))
            .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trimStart()]),
        ),
      )
      .filter((e) => Object.keys(e).length > 0);
    events.forEach((event, i) => {
      if (!validate(event)) {
        throw new Error(`${where}: event ${i + 1} does not match the schema:\n${describe(validate.errors)}`);
      }
    });
    return;
  }
  if (!validate(value)) {
    throw new Error(
      `${where}: body does not match openapi.yaml#${pointer}/content/${esc(mtKey)}/schema:\n${describe(validate.errors)}\nbody: ${preview(value)}`,
    );
  }
}
