/**
 * Reading a model directory in the Hugging Face layout, shared by the encoder and the cross-encoder:
 * config.json, tokenizer.json (+ tokenizer_config.json), the ONNX graph (`model.onnx` or `onnx/model*.onnx`),
 * and for sentence-transformers models 1_Pooling/config.json and sentence_bert_config.json.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { pathExists } from '../durable.js';
import { ParamineError } from '../errors.js';

/** How a cross-encoder orders a pair's two texts before it reads them (config.json `paramine.pair_order`). */
export const PAIR_ORDERS = ['shorter-first', 'longer-first'] as const;
export type PairOrder = (typeof PAIR_ORDERS)[number];

export const ConfigSchema = z.looseObject({
  model_type: z.string().optional(),
  hidden_size: z.number().int().positive().optional(),
  max_position_embeddings: z.number().int().positive().optional(),
  id2label: z.record(z.string().regex(/^\d+$/, 'id2label keys are class indices'), z.string()).optional(),
  /** What paramine's training scripts write about a cross-encoder's labels. */
  paramine: z
    .looseObject({
      label_scheme: z.enum(['binary', 'turku']).optional(),
      positive_labels: z.array(z.string().min(1)).min(1).optional(),
      /**
       * The label cut on P(paraphrase) chosen on validation data for F1 (paramine-train reranker's export stage, or
       * `paramine annotations threshold` from an index's annotations); absent: the arg-max label (0.5 for binary).
       */
      threshold: z.number().gt(0).lt(1).optional(),
      /**
       * Platt scaling of a binary model's P(paraphrase): the service reports sigmoid(a * z + b) of the model's
       * logit z (training/paramine_train/label_calibration.py), and `threshold` is on that scale. a > 0 keeps
       * the order of candidates.
       */
      label_calibration: z
        .looseObject({ method: z.literal('platt'), a: z.number().positive(), b: z.number() })
        .optional(),
      /**
       * How reranked candidates are ordered: by P(paraphrase) (default), or kept in cosine order when the
       * training script found that reordering by the model lowers top-1 on a validation set (the labels
       * and probabilities are still the model's).
       */
      rerank_order: z.enum(['probability', 'cosine']).optional(),
      /**
       * Which text of a pair the model reads first: pairs are put in this order before scoring, so P(a, b) =
       * P(b, a) by construction (ties by length: code-unit order). Chosen per model on validation pairs
       * (docs/training.md); absent: shorter first.
       */
      pair_order: z.enum(PAIR_ORDERS).optional(),
      /**
       * The label cascade (`paramine models cascade`): pairs whose reported P(paraphrase) falls in
       * [band[0], band[1]) are labeled by `teacher` (a model name or directory) in the `balanced` mode.
       */
      cascade: z
        .looseObject({
          teacher: z.string().min(1),
          band: z
            .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
            .refine(([lo, hi]) => lo <= hi, 'band: [low, high] with low <= high'),
        })
        .optional(),
      /**
       * The rerank order's mix with the bi-encoder's cosine (training/paramine_train/calibrate.py), on the logit
       * of the reported (label-calibrated, where there is a label calibration) P(paraphrase).
       */
      calibration: z
        .looseObject({
          w_logit: z.number(),
          w_cosine: z.number(),
          bias: z.number(),
          encoder: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
});
export type ModelConfig = z.infer<typeof ConfigSchema>;

export const TokenizerConfigSchema = z.looseObject({
  // Hugging Face writes 1e30 here when a tokenizer has no limit: treated as absent.
  model_max_length: z.number().positive().optional(),
  do_lower_case: z.boolean().optional(),
});

/** Only the shape tokenizers.js relies on; it validates the rest itself. */
export const TokenizerJsonSchema = z.looseObject({
  model: z.looseObject({ type: z.string().optional(), vocab: z.unknown() }),
  added_tokens: z.array(z.looseObject({ id: z.number().int(), content: z.string() })).optional(),
  normalizer: z.unknown().optional(),
  pre_tokenizer: z.unknown().optional(),
  post_processor: z.unknown().optional(),
});

export const PoolingConfigSchema = z.looseObject({
  word_embedding_dimension: z.number().int().positive().optional(),
  pooling_mode_cls_token: z.boolean().optional(),
  pooling_mode_mean_tokens: z.boolean().optional(),
  pooling_mode_max_tokens: z.boolean().optional(),
  pooling_mode_mean_sqrt_len_tokens: z.boolean().optional(),
  pooling_mode_weightedmean_tokens: z.boolean().optional(),
  pooling_mode_lasttoken: z.boolean().optional(),
});

export const SentenceBertConfigSchema = z.looseObject({
  max_seq_length: z.number().int().positive().optional(),
});

export type Pooling = 'mean' | 'cls' | 'max' | 'mean_sqrt_len';

export interface ModelDir {
  /** Absolute path of the directory. */
  dir: string;
  /** Directory name: the model id an index manifest records. */
  name: string;
  config: ModelConfig;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Absolute path of the chosen ONNX graph, and the same relative to `dir`. */
  onnxPath: string;
  onnxFile: string;
  /** Pooling from 1_Pooling/config.json; 'mean' when the file is absent. */
  pooling: Pooling;
  /** Token budget per input including special tokens. */
  maxLength: number;
}

export interface ReadModelDirOptions {
  /**
   * Which ONNX graph when there are several: matched against the file name, e.g. 'quantized' picks
   * onnx/model_quantized.onnx. An exact relative path (e.g. 'onnx/model_fp16.onnx') also works.
   */
  variant?: string | undefined;
  /** Override the token budget (capped at the model's position embeddings). */
  maxLength?: number | undefined;
}

/** Reads and validates one JSON file; a missing file is MODEL_MISSING_FILE naming it, a bad one BAD_CONFIG. */
export async function readJsonFile<S extends z.ZodType>(
  dir: string,
  file: string,
  schema: S,
): Promise<z.infer<S>> {
  const path = join(dir, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ParamineError('MODEL_MISSING_FILE', `model directory ${dir} has no ${file}`, {
      field: file,
      cause: e,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ParamineError('BAD_CONFIG', `${path} is not valid JSON: ${(e as Error).message}`, {
      field: file,
      cause: e,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ParamineError('BAD_CONFIG', `${path}: ${z.prettifyError(parsed.error)}`, { field: file });
  }
  return parsed.data;
}

/** Every ONNX graph of a model directory, relative paths, in preference order (model.onnx first). */
export async function listOnnxFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  if (await pathExists(join(dir, 'model.onnx'))) found.push('model.onnx');
  let sub: string[] = [];
  try {
    sub = await readdir(join(dir, 'onnx'));
  } catch {
    // no onnx/ folder
  }
  const variants = sub
    .filter((f) => /^model.*\.onnx$/.test(f))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
  for (const f of variants) found.push(`onnx/${f}`);
  return found;
}

// Plain fp32 first, then anything else in name order.
function rank(file: string): number {
  return file === 'model.onnx' ? 0 : 1;
}

export async function findOnnx(dir: string, variant?: string): Promise<string> {
  const files = await listOnnxFiles(dir);
  if (files.length === 0) {
    throw new ParamineError(
      'MODEL_MISSING_FILE',
      `model directory ${dir} has no model.onnx or onnx/model*.onnx`,
      {
        field: 'model.onnx',
      },
    );
  }
  if (variant === undefined) return files[0]!;
  const exact = files.find(
    (f) => f === variant || f === `onnx/${variant}` || basename(f) === `model_${variant}.onnx`,
  );
  const loose = exact ?? files.find((f) => basename(f).includes(variant));
  if (loose === undefined) {
    throw new ParamineError(
      'MODEL_MISSING_FILE',
      `model directory ${dir} has no ONNX variant '${variant}' (has ${files.join(', ')})`,
      { field: `onnx/model_${variant}.onnx` },
    );
  }
  return loose;
}

function poolingFrom(cfg: z.infer<typeof PoolingConfigSchema>, file: string): Pooling {
  const modes: Pooling[] = [];
  if (cfg.pooling_mode_cls_token) modes.push('cls');
  if (cfg.pooling_mode_mean_tokens) modes.push('mean');
  if (cfg.pooling_mode_max_tokens) modes.push('max');
  if (cfg.pooling_mode_mean_sqrt_len_tokens) modes.push('mean_sqrt_len');
  if (cfg.pooling_mode_weightedmean_tokens || cfg.pooling_mode_lasttoken) {
    throw new ParamineError('BAD_CONFIG', `${file}: weighted-mean and last-token pooling are not supported`, {
      field: file,
    });
  }
  // sentence-transformers concatenates several modes; nothing we serve uses that.
  if (modes.length > 1) {
    throw new ParamineError(
      'BAD_CONFIG',
      `${file}: combined pooling modes (${modes.join('+')}) are not supported`,
      {
        field: file,
      },
    );
  }
  return modes[0] ?? 'mean';
}

/** Reads everything both model kinds need from a directory; the ONNX graph itself is opened by the caller. */
export async function readModelDir(dirIn: string, opts: ReadModelDirOptions = {}): Promise<ModelDir> {
  const dir = resolve(dirIn);
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(dir);
  } catch (e) {
    throw new ParamineError('NOT_FOUND', `model directory ${dirIn} does not exist`, {
      field: dirIn,
      cause: e,
    });
  }
  if (!st.isDirectory())
    throw new ParamineError('BAD_INPUT', `${dirIn} is not a directory`, { field: dirIn });

  const config = await readJsonFile(dir, 'config.json', ConfigSchema);
  const tokenizerJson = await readJsonFile(dir, 'tokenizer.json', TokenizerJsonSchema);
  const tokenizerConfig = await readJsonFile(dir, 'tokenizer_config.json', TokenizerConfigSchema);
  const onnxFile = await findOnnx(dir, opts.variant);

  const poolingFile = join('1_Pooling', 'config.json');
  const pooling = (await pathExists(join(dir, poolingFile)))
    ? poolingFrom(await readJsonFile(dir, poolingFile, PoolingConfigSchema), poolingFile)
    : 'mean';

  const sbert = (await pathExists(join(dir, 'sentence_bert_config.json')))
    ? await readJsonFile(dir, 'sentence_bert_config.json', SentenceBertConfigSchema)
    : {};

  // The same precedence as sentence-transformers: its own max_seq_length, else the tokenizer's limit,
  // never more than the position embeddings.
  const positions = config.max_position_embeddings ?? 512;
  const tokLimit =
    tokenizerConfig.model_max_length !== undefined && tokenizerConfig.model_max_length < 1e6
      ? Math.floor(tokenizerConfig.model_max_length)
      : undefined;
  const wanted = opts.maxLength ?? sbert.max_seq_length ?? tokLimit ?? positions;
  const maxLength = Math.min(wanted, positions);
  if (maxLength < 4) {
    throw new ParamineError('BAD_CONFIG', `max length ${maxLength} is too small for model ${dir}`, {
      field: 'maxLength',
    });
  }

  return {
    dir,
    name: basename(dir),
    config,
    tokenizerJson,
    tokenizerConfig,
    onnxPath: join(dir, onnxFile),
    onnxFile: relative(dir, join(dir, onnxFile)),
    pooling,
    maxLength,
  };
}

/** Label names in class-id order from config.json's id2label (empty when it has none). */
export function labelsOf(md: ModelDir): string[] {
  const id2label = md.config.id2label ?? {};
  return Object.entries(id2label)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([, l]) => l);
}
