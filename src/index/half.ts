/**
 * IEEE 754 half precision (binary16) <-> float32, exact (Node 20 has no Float16Array).
 *
 * toHalf rounds to nearest, ties to even, like a hardware conversion: values past the largest half
 * (65504, or from 65520 up once rounded) become infinity, tiny values become subnormals or signed zero,
 * NaN stays NaN with the top of its payload. fromHalf is exact: every half is a float32, and every half
 * survives fromHalf then toHalf.
 */

/** float32 bit patterns of all 65536 halves, built on first use (256 KiB). */
let table: Uint32Array | undefined;

function halfTable(): Uint32Array {
  if (table) return table;
  const bits = new Uint32Array(65536);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) {
      // Zero or subnormal: mant * 2^-24, exact in float32.
      f[0] = mant * 2 ** -24;
      bits[h] = (sign | u[0]!) >>> 0;
    } else if (exp === 31) {
      bits[h] = (sign | 0x7f800000 | (mant << 13)) >>> 0; // infinity, or NaN keeping its payload
    } else {
      bits[h] = (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
    }
  }
  table = bits;
  return bits;
}

/** One float32 bit pattern to half bits (round to nearest even). */
export function halfBits(f32bits: number): number {
  const sign = (f32bits >>> 16) & 0x8000;
  const abs = f32bits & 0x7fffffff;
  if (abs >= 0x47800000) {
    // |x| >= 65536, infinity or NaN.
    if (abs > 0x7f800000) {
      // NaN keeps the top of its payload (so every half round-trips); one lost entirely becomes quiet.
      const payload = (abs >>> 13) & 0x3ff;
      return sign | 0x7c00 | (payload === 0 ? 0x200 : payload);
    }
    return sign | 0x7c00;
  }
  if (abs >= 0x38800000) {
    // Normal half range (|x| >= 2^-14): rebias the exponent, round on the 13 dropped bits. A carry
    // out of the mantissa bumps the exponent, up to infinity for [65520, 65536).
    const odd = (abs >>> 13) & 1;
    return sign | ((abs - 0x38000000 + 0xfff + odd) >>> 13);
  }
  if (abs < 0x33000000) return sign; // below 2^-25: rounds to zero
  // Subnormal half: x = m * 2^(e-150) with the implicit bit, half = x / 2^-24 = m >> (126 - e).
  const e = abs >>> 23;
  const m = (abs & 0x7fffff) | 0x800000;
  const shift = 126 - e; // 14..24
  let h = m >>> shift;
  const rem = m & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rem > halfway || (rem === halfway && (h & 1) === 1)) h++; // may carry into the smallest normal
  return sign | h;
}

/** float32 -> half bits, element-wise. */
export function toHalf(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = halfBits(bits[i]!);
  return out;
}

/** half bits -> float32, element-wise (exact). */
export function fromHalf(halves: Uint16Array): Float32Array {
  const out = new Float32Array(halves.length);
  fromHalfInto(halves, 0, new Uint32Array(out.buffer), 0, halves.length);
  return out;
}

/**
 * `count` halves from `src[srcAt]` on, converted into `dstBits[dstAt]` on, where `dstBits` is a
 * Uint32Array view of the float32 destination (made once by the caller): no intermediate array, so a
 * reader can scatter rows straight into place (a subarray per row costs more than converting it).
 */
export function fromHalfInto(
  src: Uint16Array,
  srcAt: number,
  dstBits: Uint32Array,
  dstAt: number,
  count: number,
): void {
  const t = halfTable();
  for (let i = 0; i < count; i++) dstBits[dstAt + i] = t[src[srcAt + i]!]!;
}
