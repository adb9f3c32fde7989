/**
 * The web page: `/` (the shell), `/assets/{file}` (its modules and styles, from src/server/web) and
 * `/vendor/{file}` (preact, its hooks and htm, read from node_modules once at start, no bundler). Every
 * response of this plugin carries a Content-Security-Policy that allows only this origin's scripts,
 * styles and connections: the page has no inline script or style.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import { ParamineError } from '../../errors.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { assetParams, vendorParams } from '../contract/requests.js';

/** src/server/web, from src/server/routes or dist/server/routes alike. */
export const WEB_ROOT = fileURLToPath(new URL('../../../src/server/web/', import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface VendorFile {
  body: string;
  etag: string;
}

/**
 * The browser builds of the page's libraries. preact/hooks imports the bare name "preact"; without an
 * import map (an inline script) the browser cannot resolve it, so it is pointed at the file beside it.
 */
function vendorFiles(): Map<string, VendorFile> {
  // The packages' own ES module entry points (their `import` export conditions).
  const read = (specifier: string) => readFileSync(fileURLToPath(import.meta.resolve(specifier)), 'utf8');
  const files: Record<string, string> = {
    'preact.mjs': read('preact'),
    'hooks.mjs': read('preact/hooks').replace(/from\s*["']preact["']/g, 'from"./preact.mjs"'),
    'htm.mjs': read('htm'),
  };
  return new Map(
    Object.entries(files).map(([name, text]) => {
      const body = text.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
      return [name, { body, etag: etagOf(body) }];
    }),
  );
}

const etagOf = (body: string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

export const webRoutes: RoutePlugin = async (app, { auth }) => {
  const vendor = vendorFiles();
  // The page holds no data and must load to ask for a key, even under --auth-all.
  app.addHook('onRequest', auth.require('open'));
  await app.register(fastifyStatic, {
    root: WEB_ROOT,
    serve: false,
    // text/javascript is the JavaScript type (RFC 9239); send would say application/javascript.
    setHeaders: (reply: FastifyReply, path: string) => {
      if (path.endsWith('.js')) reply.header('content-type', 'text/javascript; charset=utf-8');
    },
  });

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    return payload;
  });

  // The shell is small and names its assets without versions: always revalidate (ETag).
  app.get('/', (_req, reply) => reply.sendFile('index.html', { maxAge: 0 }));

  app.get('/assets/:file', (req, reply) => {
    const { file } = parseInput(assetParams, req.params, 'file');
    return reply.sendFile(file, { maxAge: 0 });
  });

  app.get('/vendor/:file', async (req, reply) => {
    const { file } = parseInput(vendorParams, req.params, 'file');
    const f = vendor.get(file);
    if (f === undefined) throw new ParamineError('NOT_FOUND', `no vendor file ${file}`, { field: 'file' });
    reply.header('etag', f.etag).header('cache-control', 'public, max-age=3600');
    if (req.headers['if-none-match'] === f.etag) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(f.body);
  });
};
