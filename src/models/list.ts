/** `paramine models list`: what is under models/, read the same way the encoder and cross-encoder read it. */
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { sha256File } from '../durable.js';
import { isParamineError } from '../errors.js';
import { CATALOG, DEFAULT_ENCODER, DEFAULT_RERANKER } from './catalog.js';
import { CONVERTED } from './converted.js';
import { ConfigSchema, labelsOf, type ModelDir, readJsonFile, readModelDir } from './dir.js';

export interface ModelListing {
  name: string;
  dir: string;
  /** 'base': weights for the training scripts (model.safetensors, no ONNX graph), e.g. converted BERT. */
  kind: 'encoder' | 'cross-encoder' | 'span' | 'base' | 'unreadable';
  /** Embedding size (encoders). */
  dim?: number;
  /** Class labels in id order (cross-encoders). */
  labels?: string[];
  pooling?: string;
  maxLength?: number;
  onnxFile?: string;
  onnxSha256?: string;
  /** Bytes of every file in the directory. */
  sizeBytes: number;
  /** Why the directory could not be read as a model. */
  error?: string;
  /** What this model is the default of, when it is one (the training scripts read it from `--json`). */
  default?: 'encoder' | 'reranker';
}

const DEFAULTS: Readonly<Record<string, 'encoder' | 'reranker'>> = {
  [DEFAULT_ENCODER]: 'encoder',
  [DEFAULT_RERANKER]: 'reranker',
};

async function dirSize(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await dirSize(p);
    else if (e.isFile()) total += (await stat(p)).size;
  }
  return total;
}

/**
 * A sequence-classification config names its labels; a span model (paramine-train span) is a
 * question-answering one; an SBERT encoder has neither (or HF's placeholder labels).
 */
export function modelKind(md: ModelDir): 'encoder' | 'cross-encoder' | 'span' {
  const arch = md.config.architectures;
  if (Array.isArray(arch) && arch.some((a) => typeof a === 'string' && a.endsWith('ForQuestionAnswering'))) {
    return 'span';
  }
  if (
    Array.isArray(arch) &&
    arch.some((a) => typeof a === 'string' && a.endsWith('ForSequenceClassification'))
  ) {
    return 'cross-encoder';
  }
  return 'encoder';
}

export async function listModels(modelsDirIn = 'models'): Promise<ModelListing[]> {
  const modelsDir = resolve(modelsDirIn);
  let entries: string[];
  try {
    entries = (await readdir(modelsDir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  const out: ModelListing[] = [];
  for (const name of entries) {
    const dir = join(modelsDir, name);
    const sizeBytes = await dirSize(dir);
    try {
      const md = await readModelDir(dir);
      const kind = modelKind(md);
      const row: ModelListing = {
        name,
        dir,
        kind,
        maxLength: md.maxLength,
        onnxFile: md.onnxFile,
        onnxSha256: await sha256File(md.onnxPath),
        sizeBytes,
      };
      const role = DEFAULTS[name];
      if (role !== undefined) row.default = role;
      if (kind === 'encoder') {
        const dim = md.config.hidden_size;
        if (dim !== undefined) row.dim = dim;
        row.pooling = md.pooling;
      } else if (kind === 'cross-encoder') {
        row.labels = labelsOf(md);
      }
      out.push(row);
    } catch (e) {
      const base = await baseModel(dir, name, sizeBytes);
      if (base !== undefined) {
        out.push(base);
        continue;
      }
      out.push({
        name,
        dir,
        kind: 'unreadable',
        sizeBytes,
        error: isParamineError(e) ? `${e.code}: ${e.message}` : String(e),
      });
    }
  }
  return out;
}

/** A directory with config.json and model.safetensors but no ONNX graph: a training base. */
async function baseModel(dir: string, name: string, sizeBytes: number): Promise<ModelListing | undefined> {
  try {
    await stat(join(dir, 'model.safetensors'));
    const config = await readJsonFile(dir, 'config.json', ConfigSchema);
    const row: ModelListing = { name, dir, kind: 'base', sizeBytes };
    if (config.hidden_size !== undefined) row.dim = config.hidden_size;
    return row;
  } catch {
    return undefined;
  }
}

/** Catalog models that are not (yet) in the models directory, for the list's footer. */
export function notFetched(listed: readonly ModelListing[]): string[] {
  const have = new Set(listed.map((l) => l.name));
  return [...CATALOG, ...CONVERTED].filter((c) => !have.has(c.name)).map((c) => c.name);
}

export function formatListing(rows: readonly ModelListing[]): string {
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  const lines = rows.map((r) => {
    const what =
      r.kind === 'encoder'
        ? `dim ${r.dim ?? '?'} ${r.pooling}`
        : r.kind === 'cross-encoder'
          ? `labels ${r.labels?.join(',')}`
          : r.kind === 'span'
            ? 'span model (start/end logits, subSentence method span)'
            : r.kind === 'base'
              ? `hidden ${r.dim ?? '?'} (safetensors, for training)`
              : (r.error ?? '');
    const onnx = r.onnxFile ? `${r.onnxFile} sha256:${r.onnxSha256}` : '';
    const name = r.default ? `${r.name} (default ${r.default})` : r.name;
    return [name, r.kind, what, mb(r.sizeBytes), onnx].join('\t');
  });
  return lines.join('\n');
}
