/**
 * Annotations as pair files the training scripts and benchmarks read (src/corpus/pairs.ts, the Python
 * `--pairs` readers): JSON lines with `s1`, `s2`, `label` and the record's other fields, or TSV with the
 * header `s1<TAB>s2<TAB>label`. TSV is read with quoting off, so tabs and line breaks inside a text
 * become spaces (texts from the index are normalized and have none).
 */
import type { Annotation } from './store.js';

export const EXPORT_FORMATS = ['jsonl', 'tsv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA_TYPE: Record<ExportFormat, string> = {
  jsonl: 'application/x-ndjson',
  tsv: 'text/tab-separated-values',
};

const cell = (s: string) => s.replace(/[\t\r\n]+/g, ' ');

/** The lines of an export file, each ending in a newline. */
export function* exportLines(records: Iterable<Annotation>, format: ExportFormat): Generator<string> {
  if (format === 'tsv') yield 's1\ts2\tlabel\n';
  for (const a of records) {
    if (format === 'tsv') yield `${cell(a.s1)}\t${cell(a.s2)}\t${cell(a.label)}\n`;
    else {
      const { s1, s2, label, ...rest } = a;
      yield `${JSON.stringify({ s1, s2, label, ...rest })}\n`;
    }
  }
}
