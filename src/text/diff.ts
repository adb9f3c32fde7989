/**
 * A word-level diff of two sentences for reading paraphrase pairs: which spans the two share in order
 * (`equal`), which only the first has (`delete`), which only the second has (`insert`), and which both
 * have at another place (`move`, with an id linking the two sides), in the spirit of ParaTag's span
 * tags. Tokens are tokenize()'s (words, punctuation, CJK characters, emoji), compared case-insensitively
 * after NFKC; offsets are UTF-16 offsets into the strings as given.
 *
 * How: the longest common subsequence of the tokens anchors what stays in order; what is left on both
 * sides is tiled greedily, longest common run first, into moves. A run made only of function words or
 * punctuation ("the", ",") is not reported as a move: shuffled stop words are noise to a reader.
 */
import { tokenSpans } from './tokenize.js';

export type DiffOp = 'equal' | 'delete' | 'insert' | 'move';

export interface DiffSpan {
  op: DiffOp;
  /** UTF-16 offsets into the side's text: text.slice(start, end) is the span. */
  start: number;
  end: number;
  text: string;
  /** For `move`: the same number marks the span on the other side. */
  move?: number;
}

export interface PairDiff {
  /** Spans of the first text (equal, delete, move) and of the second (equal, insert, move), in order. */
  a: DiffSpan[];
  b: DiffSpan[];
}

/** Tokens beyond this many per side are compared as one trailing block (bounds the quadratic LCS). */
export const MAX_DIFF_TOKENS = 512;

/** English function words that never make a move on their own. */
const STOPWORDS = new Set(
  (
    'a an the and or but nor so of to in on at by for with from as is are was were be been being it its ' +
    'this that these those he she they we you i his her their our your my me him them us not no do does did ' +
    'has have had will would shall should can could may might must there here which who whom whose what'
  ).split(' '),
);

interface Token {
  text: string;
  start: number;
  end: number;
  key: string;
}

function tokensOf(text: string): Token[] {
  const spans = tokenSpans(text);
  const out: Token[] = spans.slice(0, MAX_DIFF_TOKENS).map((t) => ({ ...t, key: keyOf(t.text) }));
  const rest = spans.slice(MAX_DIFF_TOKENS);
  if (rest.length > 0) {
    const first = rest[0] as Token;
    const last = rest[rest.length - 1] as Token;
    const tail = text.slice(first.start, last.end);
    out.push({ text: tail, start: first.start, end: last.end, key: keyOf(tail) });
  }
  return out;
}

function keyOf(token: string): string {
  return token
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\u2019/g, "'");
}

function isContent(key: string): boolean {
  return /[\p{L}\p{N}]/u.test(key) && !STOPWORDS.has(key);
}

/**
 * Index pairs of one longest common subsequence of a and b, in order. On ties the backtrack prefers
 * matches that continue a diagonal, so runs stay whole instead of borrowing a distant duplicate.
 */
function lcsPairs(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  // len[i * w + j]: LCS length of a[i..] and b[j..].
  const len = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      len[i * w + j] =
        a[i] === b[j]
          ? (len[(i + 1) * w + j + 1] as number) + 1
          : Math.max(len[(i + 1) * w + j] as number, len[i * w + j + 1] as number);
    }
  }
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const here = len[i * w + j] as number;
    if (a[i] === b[j] && (len[(i + 1) * w + j + 1] as number) + 1 === here) {
      out.push([i, j]);
      i++;
      j++;
    } else if ((len[(i + 1) * w + j] as number) >= (len[i * w + j + 1] as number)) {
      i++;
    } else {
      j++;
    }
  }
  return out;
}

/**
 * Greedy tiling of the unmatched tokens into moves: the longest common run of still-unmatched tokens
 * first. A run of stop words and punctuation stays delete/insert but is settled all the same, so it
 * cannot split a later, real move.
 */
function tileMoves(
  a: readonly Token[],
  b: readonly Token[],
  opA: DiffOp[],
  opB: DiffOp[],
): { moveA: number[]; moveB: number[] } {
  const freeA = opA.map((op) => op === 'delete');
  const freeB = opB.map((op) => op === 'insert');
  const moveA = a.map(() => -1);
  const moveB = b.map(() => -1);
  let next = 0;
  for (;;) {
    let best = { len: 0, i: 0, j: 0 };
    for (let i = 0; i < a.length; i++) {
      if (!freeA[i]) continue;
      for (let j = 0; j < b.length; j++) {
        let len = 0;
        while (freeA[i + len] && freeB[j + len] && a[i + len]?.key === b[j + len]?.key) len++;
        if (len > best.len) best = { len, i, j };
      }
    }
    if (best.len === 0) return { moveA, moveB };
    const isMove = a.slice(best.i, best.i + best.len).some((t) => isContent(t.key));
    const id = isMove ? next++ : -1;
    for (let k = 0; k < best.len; k++) {
      freeA[best.i + k] = false;
      freeB[best.j + k] = false;
      if (!isMove) continue;
      opA[best.i + k] = 'move';
      opB[best.j + k] = 'move';
      moveA[best.i + k] = id;
      moveB[best.j + k] = id;
    }
  }
}

/** Merges consecutive tokens with the same op (and move id) into spans. */
function spansOf(
  text: string,
  tokens: readonly Token[],
  ops: readonly DiffOp[],
  moves: readonly number[],
): DiffSpan[] {
  const out: DiffSpan[] = [];
  tokens.forEach((t, i) => {
    const op = ops[i] as DiffOp;
    const move = op === 'move' ? moves[i] : undefined;
    const last = out[out.length - 1];
    if (last !== undefined && last.op === op && last.move === move) {
      last.end = t.end;
      last.text = text.slice(last.start, last.end);
      return;
    }
    out.push({ op, start: t.start, end: t.end, text: t.text, ...(move === undefined ? {} : { move }) });
  });
  return out;
}

/** The word-level diff of `a` (e.g. the query) and `b` (e.g. a candidate). */
export function pairDiff(a: string, b: string): PairDiff {
  const ta = tokensOf(a);
  const tb = tokensOf(b);
  const opA: DiffOp[] = ta.map(() => 'delete');
  const opB: DiffOp[] = tb.map(() => 'insert');
  for (const [i, j] of lcsPairs(
    ta.map((t) => t.key),
    tb.map((t) => t.key),
  )) {
    opA[i] = 'equal';
    opB[j] = 'equal';
  }
  const { moveA, moveB } = tileMoves(ta, tb, opA, opB);
  return { a: spansOf(a, ta, opA, moveA), b: spansOf(b, tb, opB, moveB) };
}
