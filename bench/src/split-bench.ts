/**
 * Sentence splitting (BENCHMARKS.md, "Documents"): paramine's splitter (Intl.Segmenter plus the break
 * suppressions ICU uses and Node's ICU leaves out, src/corpus/split.ts) against Intl.Segmenter alone and two
 * well-kept libraries (sentence-splitter 5, textlint's; sbd 1, sentence boundary detection), on hand-checked
 * samples: bench/data/split-LANG.txt holds one gold sentence a line and paragraphs between blank lines
 * (written for this benchmark: news, science, dialogue, addresses and times, with the abbreviations,
 * initials, decimals, ordinals and quotes that trip splitters). `en` and `fi` were the development
 * samples (the splitter's rules were fixed on them); `en-heldout` and `fi-heldout` were written after and
 * scored once, with no change made for them. Each paragraph is joined with single spaces and split; a
 * boundary is right when it falls where a gold sentence ends.
 *
 *   npm run lab -- split [--samples en,fi,en-heldout,fi-heldout]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sbd from 'sbd';
import { split as textlintSplit } from 'sentence-splitter';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark, list } from '../../dist/bench/harness.js';
import { splitSentences } from '../../dist/corpus/split.js';

const schema = z.object({ samples: z.array(z.string().min(2)).min(1), data: z.string().min(1) });

/** Sentence spans [start, end) of `text`. */
type Splitter = (text: string, lang: string) => Array<[number, number]>;

/** Spans of sentences given as strings, found in order in `text`. */
function spansOf(text: string, sentences: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let at = 0;
  for (const s of sentences) {
    const t = s.trim();
    if (t === '') continue;
    const start = text.indexOf(t, at);
    if (start < 0) continue;
    out.push([start, start + t.length]);
    at = start + t.length;
  }
  return out;
}

const SPLITTERS: Record<string, Splitter> = {
  paramine: (text, lang) => splitSentences(text, lang).map((s) => [s.start, s.end]),
  'Intl.Segmenter': (text, lang) =>
    spansOf(
      text,
      [...new Intl.Segmenter(lang, { granularity: 'sentence' }).segment(text)].map((s) => s.segment),
    ),
  'sentence-splitter 5.0.1': (text) =>
    textlintSplit(text)
      .filter((n) => n.type === 'Sentence')
      .map((n) => [n.range[0], n.range[1]]),
  'sbd 1.0.19': (text) => spansOf(text, sbd.sentences(text, { newline_boundaries: false })),
};

interface Score {
  boundaries: number;
  predicted: number;
  correct: number;
  precision: number;
  recall: number;
  f1: number;
  sentencesExact: number;
  sentences: number;
}

/** The gold paragraphs of a sample file: sentences, joined text and the gold boundaries. */
function paragraphs(file: string): Array<{ text: string; sentences: string[]; ends: Set<number> }> {
  const blocks = readFileSync(file, 'utf8').split(/\n\s*\n/);
  return blocks
    .map((b) =>
      b
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    )
    .filter((s) => s.length > 0)
    .map((sentences) => {
      const text = sentences.join(' ');
      const ends = new Set<number>();
      let at = 0;
      for (const s of sentences.slice(0, -1)) {
        at += s.length;
        ends.add(at);
        at += 1;
      }
      return { text, sentences, ends };
    });
}

function score(file: string, lang: string, splitter: Splitter): Score {
  let boundaries = 0;
  let predicted = 0;
  let correct = 0;
  let exact = 0;
  let sentences = 0;
  for (const p of paragraphs(file)) {
    const spans = splitter(p.text, lang);
    // A boundary: a sentence ends before the paragraph does (trailing spaces aside).
    const ends = spans.map(([, e]) => e).filter((e) => p.text.slice(e).trim() !== '');
    boundaries += p.ends.size;
    predicted += ends.length;
    correct += ends.filter((e) => p.ends.has(e)).length;
    const got = new Set(spans.map(([s, e]) => p.text.slice(s, e).trim()));
    exact += p.sentences.filter((s) => got.has(s)).length;
    sentences += p.sentences.length;
  }
  const precision = predicted ? correct / predicted : 1;
  const recall = boundaries ? correct / boundaries : 1;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return {
    boundaries,
    predicted,
    correct,
    precision,
    recall,
    f1,
    sentencesExact: exact / sentences,
    sentences,
  };
}

async function run(o: z.output<typeof schema>): Promise<BenchOutput<Record<string, Record<string, Score>>>> {
  const result: Record<string, Record<string, Score>> = {};
  const rows = [
    '| sample | splitter | boundary precision | boundary recall | F1 | sentences exactly right |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const sample of o.samples) {
    const file = join(o.data, `split-${sample}.txt`);
    const lang = sample.split('-')[0] as string;
    result[sample] = {};
    for (const [name, splitter] of Object.entries(SPLITTERS)) {
      const s = score(file, lang, splitter);
      (result[sample] as Record<string, Score>)[name] = s;
      rows.push(
        `| ${sample} (${s.sentences} sentences) | ${name} | ${s.precision.toFixed(3)} | ${s.recall.toFixed(3)} | ` +
          `${s.f1.toFixed(3)} | ${(s.sentencesExact * 100).toFixed(1)}% |`,
      );
    }
  }
  return { result, markdown: `${rows.join('\n')}\n` };
}

export const splitBench = defineBenchmark({
  name: 'split',
  description: "sentence splitting: paramine's splitter vs Intl.Segmenter, sentence-splitter and sbd",
  options: (cmd) =>
    cmd
      .option('--samples <list>', 'samples bench/data/split-NAME.txt to score (NAME: LANG or LANG-…)', list, [
        'en',
        'fi',
        'en-heldout',
        'fi-heldout',
      ])
      .option('--data <dir>', 'where the samples are', 'bench/data'),
  schema,
  run: async (o) => run(o),
});
