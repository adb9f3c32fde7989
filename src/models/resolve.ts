/** A model given by name (`all-minilm-l6-v2`) or by directory: names live under ./models, then the package's models/. */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ParamineError } from '../errors.js';

const PACKAGE_MODELS = fileURLToPath(new URL('../../models', import.meta.url));

export function resolveModelDir(nameOrDir: string, field = 'model'): string {
  const candidates = [nameOrDir, join('models', nameOrDir), join(PACKAGE_MODELS, nameOrDir)];
  for (const c of candidates) {
    if (existsSync(c) && statSync(c).isDirectory()) return resolve(c);
  }
  throw new ParamineError(
    'NOT_FOUND',
    `model "${nameOrDir}" not found (looked in ${candidates.join(', ')}); run \`paramine models fetch ${nameOrDir}\` or give a model directory`,
    { field },
  );
}
