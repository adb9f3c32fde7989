/** The web routes' operations. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errors } from '../components.js';
import { md } from '../md.js';
import { assetParams, vendorParams } from '../requests.js';
import { ClientConfig } from '../schemas/info.js';

export const webPaths: ZodOpenApiPathsObject = {
  '/v1/config': {
    get: {
      operationId: 'getConfig',
      tags: ['web'],
      summary: "What a client needs first - auth, the cross-encoder's labels, annotation schemes, defaults.",
      responses: {
        '200': {
          description: "The service's configuration as a client sees it.",
          content: {
            'application/json': {
              schema: ClientConfig,
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/v1/whoami': {
    get: {
      operationId: 'whoami',
      tags: ['web'],
      summary: "Checks the Bearer key (whatever the route's usual rules) and names it.",
      description: md(
        'With API keys configured, a missing or wrong key is a 401; without keys every request passes and',
        '`name` is null.',
        '',
      ),
      security: [
        {},
        {
          bearerAuth: [],
        },
      ],
      responses: {
        '200': {
          description: 'The key is good.',
          content: {
            'application/json': {
              schema: z.strictObject({
                keys: z.boolean().describe('Whether the service has API keys.'),
                name: z.string().nullable().describe("The key's name."),
              }),
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/': {
    get: {
      operationId: 'webPage',
      tags: ['web'],
      security: [],
      summary: 'The web page (search, annotation, jobs, index).',
      description: md(
        'Served with a Content-Security-Policy that allows scripts, styles and connections from this',
        'origin only; the page loads `/assets/*` and `/vendor/*`.',
        '',
      ),
      responses: {
        '200': {
          description: 'The page.',
          content: {
            'text/html': {
              schema: z.string(),
            },
          },
        },
        ...errors('401', '500'),
      },
    },
  },
  '/assets/{file}': {
    get: {
      operationId: 'webAsset',
      tags: ['web'],
      security: [],
      summary: "One of the page's modules or style sheets.",
      requestParams: { path: assetParams },
      responses: {
        '200': {
          description: 'The file.',
          content: {
            'text/javascript': {
              schema: z.string(),
            },
            'text/css': {
              schema: z.string(),
            },
            'image/svg+xml': {
              schema: z.string(),
            },
          },
        },
        '304': {
          description: 'Not modified (ETag).',
        },
        ...errors('400', '401', '404', '500'),
      },
    },
  },
  '/vendor/{file}': {
    get: {
      operationId: 'webVendor',
      tags: ['web'],
      security: [],
      summary: "The page's libraries (preact, preact/hooks, htm) as ES modules.",
      requestParams: { path: vendorParams },
      responses: {
        '200': {
          description: 'The module.',
          content: {
            'text/javascript': {
              schema: z.string(),
            },
          },
        },
        '304': {
          description: 'Not modified (ETag).',
        },
        ...errors('401', '404', '500'),
      },
    },
  },
};
