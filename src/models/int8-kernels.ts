/**
 * Whether this CPU's int8 kernels saturate. ONNX Runtime multiplies a dynamically quantized graph's uint8
 * activations by its int8 weights with VPMADDUBSW on x86-64 AVX2 (and AVX-512 without VNNI), which adds two
 * u8·s8 products into a saturating int16: 255·127·2 > 32767. On such CPUs (most AMD EPYC, pre-Ice Lake
 * Intel) a u8s8 graph's logits are garbage: the MPNet teacher scored MultiPIT F1 0.008 on an EPYC. ORT's
 * `session.x64quantprecision` switches those kernels to exact u8u8 ones, ~2.8x slower on a VNNI machine
 * (measured: teacher 14.4 -> 4.7 pairs/s on the Xeon here), so it is turned on only where needed.
 *
 * The CPU is asked by behaviour, not by name: a 123-byte MatMulInteger graph multiplies 255s by 127s and the
 * answer is compared with the exact product. That holds under emulators (qemu-user reports its own CPUID
 * while /proc/cpuinfo is the host's) and on CPUs no feature list anticipated.
 */
import * as ort from 'onnxruntime-node';
import { env } from '../env.js';
import { ParamineError } from '../errors.js';

/** MatMulInteger(a: uint8[m, k], b: int8[k, n]) -> int32[m, n], opset 13 (scripts/make_int8_probe.py). */
const PROBE_GRAPH =
  'CAg6cQoYCgFhCgFiEgF5Ig1NYXRNdWxJbnRlZ2VyEhBzYXR1cmF0aW9uX3Byb2JlWhUKAWESEAoOCAISCgoDEgFtCgMSAWtaFQoBYhIQCg4IAxIKCgMSAWsKAxIBbmIVCgF5EhAKDggGEgoKAxIBbQoDEgFuQgQKABAN';
/** Shapes as in a transformer layer's projections (rows = tokens); every product is the worst case. */
const M = 8;
const K = 256;
const N = 64;

let probed: Promise<boolean> | undefined;

/** True when u8s8 products saturate here; probed once per process (a few ms). */
export function int8Saturates(): Promise<boolean> {
  probed ??= probe();
  return probed;
}

async function probe(): Promise<boolean> {
  const session = await ort.InferenceSession.create(Buffer.from(PROBE_GRAPH, 'base64'), {
    intraOpNumThreads: 1,
  });
  try {
    const a = new ort.Tensor('uint8', new Uint8Array(M * K).fill(255), [M, K]);
    const b = new ort.Tensor('int8', new Int8Array(K * N).fill(127), [K, N]);
    const y = (await session.run({ a, b })).y?.data as Int32Array | undefined;
    const exact = 255 * 127 * K;
    return y === undefined || y.some((v) => v !== exact);
  } finally {
    await session.release();
  }
}

/** ORT session entries that keep a dynamically quantized graph exact on this CPU (PARAMINE_INT8_PRECISION). */
export async function int8SessionEntries(dynamicQuantization: boolean): Promise<Record<string, string>> {
  const mode = env('PARAMINE_INT8_PRECISION') ?? 'auto';
  if (!['auto', 'on', 'off'].includes(mode)) {
    throw new ParamineError('BAD_CONFIG', `PARAMINE_INT8_PRECISION=${mode}: expected auto, on or off`, {
      field: 'PARAMINE_INT8_PRECISION',
    });
  }
  const precise = mode === 'on' || (mode === 'auto' && (await int8Saturates()));
  return dynamicQuantization && precise ? { x64quantprecision: '1' } : {};
}
