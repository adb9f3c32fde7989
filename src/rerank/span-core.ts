/**
 * The span model proper (ParaSCI's sub-sentence method, paramine-train span): extractive QA where the
 * question is a short sentence and the text a longer one; the graph gives start and end logits per token,
 * and the span is the best (start, end) over the text's tokens, or none when [CLS]'s score (start + end
 * logit at position 0) is higher. Spans are returned as character offsets in the text: the text is split
 * into words first, so every token maps back to the word it came from. `SpanModel` (span.ts) runs this in a
 * worker thread.
 */
import { ParamineError } from '../errors.js';
import type { ModelInfo } from '../models/handle.js';
import { type Batch, floatOutput, ModelRuntime, type RuntimeOptions } from '../models/runtime.js';

export type SpanModelCoreOptions = RuntimeOptions;

export interface SpanModelInfo extends ModelInfo {
  /** Longest span in tokens (config.json's `paramine.max_answer_tokens`, else 64). */
  maxAnswerTokens: number;
}

export interface SpanQuery {
  /** The short sentence. */
  question: string;
  /** The longer text a part of which may paraphrase it. */
  text: string;
}

export interface SpanHit {
  /** Character offsets of the span in the text, end exclusive. */
  start: number;
  end: number;
  /** start + end logit of the span minus the no-span score ([CLS]); > 0 by construction. */
  score: number;
}

// Words the way BERT's basic tokenizer cuts them: runs of letters, marks and digits, or one other character.
const WORD = /[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu;

export function splitWords(text: string): Array<{ text: string; start: number; end: number }> {
  return [...text.matchAll(WORD)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));
}

export function checkSpanQueries(items: unknown): asserts items is SpanQuery[] {
  if (!Array.isArray(items)) throw new ParamineError('BAD_INPUT', 'span queries must be an array');
  items.forEach((x: unknown, i) => {
    const q = x as Partial<SpanQuery> | null;
    if (typeof q?.question !== 'string' || typeof q.text !== 'string') {
      throw new ParamineError('BAD_INPUT', 'a span query is {question, text} strings', {
        field: `items[${i}]`,
      });
    }
  });
}

/** Best (i, j) with i <= j < i + maxAnswer over the marked tokens, against the null score at position 0. */
export function bestTokenSpan(
  start: ArrayLike<number>,
  end: ArrayLike<number>,
  inText: (i: number) => boolean,
  length: number,
  maxAnswer: number,
): { i: number; j: number; score: number } | undefined {
  const nullScore = (start[0] as number) + (end[0] as number);
  let best: { i: number; j: number; score: number } | undefined;
  for (let i = 0; i < length; i++) {
    if (!inText(i)) continue;
    for (let j = i; j < Math.min(length, i + maxAnswer); j++) {
      if (!inText(j)) break;
      const s = (start[i] as number) + (end[j] as number);
      if (best === undefined || s > best.score) best = { i, j, score: s };
    }
  }
  if (best === undefined || best.score <= nullScore) return undefined;
  return { ...best, score: best.score - nullScore };
}

export class SpanModelCore {
  private readonly rt: ModelRuntime;
  private readonly maxAnswer: number;

  private constructor(rt: ModelRuntime) {
    this.rt = rt;
    const names = rt.outputNames;
    for (const n of ['start_logits', 'end_logits']) {
      if (!names.includes(n)) {
        throw new ParamineError(
          'BAD_CONFIG',
          `${rt.modelDir.onnxPath} has no ${n} output (outputs: ${names.join(', ')}): not a span model`,
          { field: rt.modelDir.onnxFile },
        );
      }
    }
    const cfg = rt.modelDir.config.paramine as { max_answer_tokens?: unknown } | undefined;
    const m = cfg?.max_answer_tokens;
    this.maxAnswer = typeof m === 'number' && Number.isInteger(m) && m > 0 ? m : 64;
  }

  static async open(dir: string, opts: SpanModelCoreOptions = {}): Promise<SpanModelCore> {
    const rt = await ModelRuntime.open(dir, opts);
    try {
      return new SpanModelCore(rt);
    } catch (e) {
      await rt.close();
      throw e;
    }
  }

  get info(): SpanModelInfo {
    return {
      modelId: this.rt.modelDir.name,
      onnxSha256: this.rt.onnxSha256,
      onnxFile: this.rt.modelDir.onnxFile,
      maxLength: this.rt.tokenizer.maxLength,
      maxAnswerTokens: this.maxAnswer,
    };
  }

  /** One answer per query, in order: the span's character offsets in `text`, or null for none. */
  async find(items: readonly SpanQuery[]): Promise<Array<SpanHit | null>> {
    checkSpanQueries(items);
    const out: Array<SpanHit | null> = new Array(items.length).fill(null);
    if (items.length === 0) return out;
    const words = items.map((q) => splitWords(q.text));
    const tok = this.rt.tokenizer;
    const wordOfs: Int32Array[] = new Array(items.length);
    const encoded = await this.rt.tokenize(
      items.map((q, k) => ({ q, k })),
      ({ q, k }) => {
        const x = tok.encodeQuestionWords(
          q.question,
          (words[k] ?? []).map((w) => w.text),
        );
        wordOfs[k] = x.wordOf;
        return x;
      },
    );
    await this.rt.runAll(encoded, (batch, result) => {
      const s = this.logits(batch, floatOutput(result, 'start_logits'));
      const e = this.logits(batch, floatOutput(result, 'end_logits'));
      const L = batch.length;
      batch.rows.forEach((row, k) => {
        const wordOf = wordOfs[row] as Int32Array;
        const hit = bestTokenSpan(
          s.subarray(k * L, (k + 1) * L),
          e.subarray(k * L, (k + 1) * L),
          (i) => (wordOf[i] ?? -1) >= 0,
          L,
          this.maxAnswer,
        );
        if (hit === undefined) return;
        const ws = words[row] ?? [];
        const a = ws[wordOf[hit.i] as number];
        const b = ws[wordOf[hit.j] as number];
        if (a !== undefined && b !== undefined) out[row] = { start: a.start, end: b.end, score: hit.score };
      });
    });
    return out;
  }

  private logits(batch: Batch, t: { data: Float32Array; dims: number[] }): Float32Array {
    if (t.dims.length !== 2 || t.dims[0] !== batch.rows.length || t.dims[1] !== batch.length) {
      throw new ParamineError(
        'BAD_CONFIG',
        `${this.rt.modelDir.onnxFile}: span logits have shape [${t.dims}], expected [${batch.rows.length},${batch.length}]`,
      );
    }
    return t.data;
  }

  async close(): Promise<void> {
    await this.rt.close();
  }
}
