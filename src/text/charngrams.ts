/**
 * Character n-gram extraction with scikit-learn's analyzers (see tfidf.ts for the measure).
 *
 *  - text: normalize()d (NFC, whitespace collapsed to single spaces and trimmed), then, by
 *    default, toLowerCase (sklearn lowercase=True);
 *  - characters are Unicode code points (Python str semantics: an emoji is one character);
 *  - 'char_wb' (sklearn _char_wb_ngrams): n-grams only inside words; each space-separated word is
 *    padded to " word " and gives its n-grams for n = minN..maxN; once n reaches the padded
 *    length the whole padded word is one gram and longer n add nothing;
 *  - 'char' (sklearn _char_ngrams): n-grams over the whole text, spaces included, no padding,
 *    n = minN..min(maxN, length).
 */
import { ParamineError } from '../errors.js';
import { normalize } from './normalize.js';

export type CharAnalyzer = 'char_wb' | 'char';

export interface CharNgramOptions {
  /** 'char_wb' (default): n-grams within space-padded words; 'char': across the whole text. */
  analyzer?: CharAnalyzer;
  /** Smallest n-gram length, default 2. */
  minN?: number;
  /** Largest n-gram length, default 4. */
  maxN?: number;
  /** Lower-case before extracting (default true, as sklearn). */
  lowercase?: boolean;
  /** tf → 1 + ln(tf) (default false, as sklearn). */
  sublinearTf?: boolean;
}

export type ResolvedCharNgramOptions = Required<CharNgramOptions>;

export function resolveCharNgramOptions(o: CharNgramOptions): ResolvedCharNgramOptions {
  const r: ResolvedCharNgramOptions = {
    analyzer: o.analyzer ?? 'char_wb',
    minN: o.minN ?? 2,
    maxN: o.maxN ?? 4,
    lowercase: o.lowercase ?? true,
    sublinearTf: o.sublinearTf ?? false,
  };
  if (r.analyzer !== 'char_wb' && r.analyzer !== 'char') {
    throw new ParamineError('BAD_CONFIG', `unknown analyzer ${String(r.analyzer)}`, { field: 'analyzer' });
  }
  if (!Number.isInteger(r.minN) || !Number.isInteger(r.maxN) || r.minN < 1 || r.maxN < r.minN) {
    throw new ParamineError('BAD_CONFIG', `bad n-gram range (${r.minN}, ${r.maxN})`, { field: 'minN' });
  }
  return r;
}

/** The text the analyzers see. */
export function prepare(text: string, o: ResolvedCharNgramOptions): string {
  const s = normalize(text);
  return o.lowercase ? s.toLowerCase() : s;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Adds the n-grams of the code-point sequence `cps` (a string when it is all BMP) to `out`. */
function addGrams(
  cps: string | string[],
  wb: boolean,
  minN: number,
  maxN: number,
  out: Map<string, number>,
): void {
  const len = cps.length;
  for (let n = minN; n <= maxN; n++) {
    if (n >= len) {
      // whole sequence once: for 'char_wb' that is sklearn's "short word counted once"; 'char'
      // only has it when n === len
      if (wb || n === len) {
        const g = typeof cps === 'string' ? cps : cps.join('');
        out.set(g, (out.get(g) ?? 0) + 1);
      }
      break;
    }
    for (let i = 0; i + n <= len; i++) {
      const g = typeof cps === 'string' ? cps.slice(i, i + n) : cps.slice(i, i + n).join('');
      out.set(g, (out.get(g) ?? 0) + 1);
    }
  }
}

/** n-gram → count for prepared text `s`. */
export function countGrams(s: string, o: ResolvedCharNgramOptions): Map<string, number> {
  const out = new Map<string, number>();
  if (s === '') return out;
  if (o.analyzer === 'char') {
    addGrams(SURROGATE.test(s) ? Array.from(s) : s, false, o.minN, o.maxN, out);
  } else {
    const astral = SURROGATE.test(s);
    for (const word of s.split(' ')) {
      const w = ` ${word} `;
      addGrams(astral ? Array.from(w) : w, true, o.minN, o.maxN, out);
    }
  }
  return out;
}

/** Raw n-gram counts of a text (after normalize and, by default, lower-casing). */
export function charNgramCounts(text: string, options: CharNgramOptions = {}): Map<string, number> {
  const o = resolveCharNgramOptions(options);
  return countGrams(prepare(text, o), o);
}
