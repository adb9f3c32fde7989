/**
 * Fast path of the pair-level char n-gram cosine (tfidf.ts: charNgramCosine). Same n-grams as
 * charngrams.ts, without building a string per n-gram:
 *  - code points of both prepared texts are interned to ids 1..V (space is 1), shared by the pair;
 *  - an n-gram is the base-(V+1) number of its ids, unique across n since no id is 0;
 *  - both texts' n-grams are counted in one open-addressing hash table, then one pass over the
 *    used slots gives the dot product and both norms.
 * All buffers are module-level scratch space reused across calls (JS is single-threaded and
 * nothing here calls back out), grown on demand. Returns undefined when (V+1)^maxN would exceed
 * 2^53; the caller then uses string n-grams.
 */
import type { ResolvedCharNgramOptions } from './charngrams.js';

const SPACE_ID = 1;

// ---- code point → id, reset per pair in O(1) with a generation stamp ----
let stamp = 0;
const seen = new Int32Array(0x10000);
const bmpId = new Int32Array(0x10000);
const astralId = new Map<number, number>();
let nextId = 0;

function resetIds(): void {
  stamp++;
  if (stamp === 0x7fffffff) {
    seen.fill(0);
    stamp = 1;
  }
  astralId.clear();
  seen[32] = stamp;
  bmpId[32] = SPACE_ID;
  nextId = SPACE_ID;
}

function idOf(c: number): number {
  if (c < 0x10000) {
    if (seen[c] !== stamp) {
      seen[c] = stamp;
      bmpId[c] = ++nextId;
    }
    return bmpId[c] as number;
  }
  let id = astralId.get(c);
  if (id === undefined) {
    id = ++nextId;
    astralId.set(c, id);
  }
  return id;
}

// ---- one side: its segments (whole text, or each space-padded word) laid out in `seq` ----
class Side {
  seq = new Int32Array(256);
  bounds = new Int32Array(64);
  length = 0;
  nBounds = 0;

  layout(s: string, wb: boolean): void {
    const need = 3 * s.length + 2;
    if (this.seq.length < need) this.seq = new Int32Array(need * 2);
    if (this.bounds.length < 2 * s.length + 2) this.bounds = new Int32Array(4 * s.length + 4);
    const seq = this.seq;
    const bounds = this.bounds;
    let at = 0;
    let nb = 0;
    if (s.length > 0) {
      let start = 0;
      if (wb) seq[at++] = SPACE_ID;
      for (let i = 0; i < s.length; i++) {
        let c = s.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
          c = s.codePointAt(i) as number;
          i++;
        }
        const id = idOf(c);
        if (wb && id === SPACE_ID) {
          seq[at++] = SPACE_ID;
          bounds[nb++] = start;
          bounds[nb++] = at;
          start = at;
          seq[at++] = SPACE_ID;
        } else {
          seq[at++] = id;
        }
      }
      if (wb) seq[at++] = SPACE_ID;
      bounds[nb++] = start;
      bounds[nb++] = at;
    }
    this.length = at;
    this.nBounds = nb;
  }
}
const sideA = new Side();
const sideB = new Side();

// ---- the shared count table ----
let mask = 1023;
let slotKey = new Float64Array(1024); // 0 = empty (no key is 0)
let countA = new Int32Array(1024);
let countB = new Int32Array(1024);
let used = new Int32Array(1024);
let nUsed = 0;

function reserve(grams: number): void {
  let cap = slotKey.length;
  if (cap >= 2 * grams) return;
  while (cap < 2 * grams) cap *= 2;
  mask = cap - 1;
  slotKey = new Float64Array(cap);
  countA = new Int32Array(cap);
  countB = new Int32Array(cap);
  used = new Int32Array(cap);
}

function add(key: number, counts: Int32Array): void {
  const lo = key >>> 0;
  const hi = (key - lo) / 4294967296;
  let h = Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  let slot = h & mask;
  for (;;) {
    const k = slotKey[slot];
    if (k === key) break;
    if (k === 0) {
      slotKey[slot] = key;
      used[nUsed++] = slot;
      break;
    }
    slot = (slot + 1) & mask;
  }
  counts[slot] = (counts[slot] as number) + 1;
}

/** Every window of length minN..maxN of each segment (and a whole short padded word once). */
function addAll(side: Side, o: ResolvedCharNgramOptions, base: number, counts: Int32Array): void {
  const seq = side.seq;
  const bounds = side.bounds;
  const wb = o.analyzer === 'char_wb';
  for (let b = 0; b < side.nBounds; b += 2) {
    const from = bounds[b] as number;
    const to = bounds[b + 1] as number;
    if (wb && to - from < o.minN) {
      let key = 0;
      for (let j = from; j < to; j++) key = key * base + (seq[j] as number);
      add(key, counts);
      continue;
    }
    for (let i = from; i < to; i++) {
      const top = Math.min(o.maxN, to - i);
      let key = 0;
      for (let n = 1; n <= top; n++) {
        key = key * base + (seq[i + n - 1] as number);
        if (n >= o.minN) add(key, counts);
      }
    }
  }
}

/**
 * Cosine of the two prepared texts' char n-gram vectors, tf (or 1 + ln tf) times `idfOne` for a
 * gram on one side only and times 1 for a gram on both; undefined when keys would not be exact.
 */
export function pairGramCosine(
  a: string,
  b: string,
  o: ResolvedCharNgramOptions,
  idfOne: number,
): number | undefined {
  resetIds();
  const wb = o.analyzer === 'char_wb';
  sideA.layout(a, wb);
  sideB.layout(b, wb);
  const base = nextId + 1;
  if (base ** o.maxN > Number.MAX_SAFE_INTEGER) return undefined;
  const span = o.maxN - o.minN + 1;
  reserve(span * (sideA.length + sideB.length) + sideA.nBounds + sideB.nBounds);
  nUsed = 0;
  addAll(sideA, o, base, countA);
  addAll(sideB, o, base, countB);
  let dot = 0;
  let nA = 0;
  let nB = 0;
  for (let u = 0; u < nUsed; u++) {
    const slot = used[u] as number;
    const ca = countA[slot] as number;
    const cb = countB[slot] as number;
    slotKey[slot] = 0;
    countA[slot] = 0;
    countB[slot] = 0;
    const wa = ca === 0 ? 0 : o.sublinearTf ? 1 + Math.log(ca) : ca;
    const wbt = cb === 0 ? 0 : o.sublinearTf ? 1 + Math.log(cb) : cb;
    if (ca > 0 && cb > 0) {
      dot += wa * wbt;
      nA += wa * wa;
      nB += wbt * wbt;
    } else if (ca > 0) {
      nA += wa * wa * idfOne * idfOne;
    } else {
      nB += wbt * wbt * idfOne * idfOne;
    }
  }
  return nA > 0 && nB > 0 ? dot / Math.sqrt(nA * nB) : 0;
}
