/**
 * The laboratory's `speed`: the product's parts (offline build, HTTP) and ours against Python references
 * (encoder vs sentence-transformers, our FAISS binding vs pip FAISS, mining vs paraphrase_mining), one
 * report through the product's runner.
 */
import { fileURLToPath } from 'node:url';
import { type PartSpec, PRODUCT_PARTS, speedBenchmark } from '../../dist/bench/speed.js';

const LAB = fileURLToPath(new URL('./cli.js', import.meta.url));

const part = (name: string, title: string, args: PartSpec['args']): PartSpec => ({
  title,
  shown: `npm run lab -- ${name}`,
  command: [LAB, name],
  args,
});

export const speedLab = speedBenchmark(
  {
    encode: part('encode', 'Encoder and cross-encoder (sentences/s vs sentence-transformers)', (quick) =>
      quick ? ['--n', '256', '--batches', '32'] : [],
    ),
    index: part('index', 'FAISS binding vs Python FAISS (build, QPS, latency, recall)', (quick) =>
      quick ? ['--n', '20000'] : [],
    ),
    indexer: {
      ...(PRODUCT_PARTS.indexer as PartSpec),
      shown: 'npm run lab -- indexer',
      command: [LAB, 'indexer'],
    },
    serve: PRODUCT_PARTS.serve as PartSpec,
    mine: part(
      'mine',
      'Mining vs sentence-transformers paraphrase_mining; search latency during a job',
      (quick) => ['--n', quick ? '5000' : '100000'],
    ),
  },
  'encoder, index, build, HTTP and mining speed, each beside its reference (Python ones too), in one report',
);
