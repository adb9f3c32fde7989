/** Where `paramine export` writes a split: NAME.jsonl and NAME.parquet, published whole at close. */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ParquetWriter, SchemaElement } from 'hyparquet-writer';
import { publishFile } from '../durable.js';

/** One exported row: the shared pair format plus what the job knew about the pair. */
export interface ExportRow {
  s1: string;
  s2: string;
  label: string;
  s1_id: number | null;
  s2_id: number | null;
  cosine: number;
  margin?: number;
  probabilities?: Record<string, number>;
  /** A sub-sentence pair: which side was cut, where, and the whole sentence. */
  span?: { side: 'a' | 'b'; start: number; end: number; source: string };
  groups?: Record<string, string[]>;
  /** Each side's document id (documents read with `index --documents`). */
  s1_doc?: string;
  s2_doc?: string;
  /** Each side's context window in its document (`--context N`). */
  s1_context?: ExportContext;
  s2_context?: ExportContext;
  split: string;
}

/** A side's context as exported: the texts before and after it. */
export interface ExportContext {
  before: string[];
  after: string[];
}

const ROWS_PER_GROUP = 50_000;

/** Parquet columns: the row's fields, nested ones as JSON text. */
const PARQUET_SCHEMA: SchemaElement[] = [
  { name: 'root', num_children: 18 },
  { name: 's1', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 's2', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'label', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 's1_id', type: 'INT64', repetition_type: 'OPTIONAL' },
  { name: 's2_id', type: 'INT64', repetition_type: 'OPTIONAL' },
  { name: 'cosine', type: 'DOUBLE', repetition_type: 'REQUIRED' },
  { name: 'margin', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
  { name: 'probabilities', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  { name: 'span_side', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'span_start', type: 'INT32', repetition_type: 'OPTIONAL' },
  { name: 'span_end', type: 'INT32', repetition_type: 'OPTIONAL' },
  { name: 'span_source', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'groups', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  { name: 's1_doc', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 's2_doc', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 's1_context', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  { name: 's2_context', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  { name: 'split', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
];

function parquetColumns(rows: readonly ExportRow[]): Array<{ name: string; data: unknown[] }> {
  const col = (name: string, f: (r: ExportRow) => unknown) => ({ name, data: rows.map(f) });
  const big = (x: number | null) => (x === null ? null : BigInt(x));
  return [
    col('s1', (r) => r.s1),
    col('s2', (r) => r.s2),
    col('label', (r) => r.label),
    col('s1_id', (r) => big(r.s1_id)),
    col('s2_id', (r) => big(r.s2_id)),
    col('cosine', (r) => r.cosine),
    col('margin', (r) => r.margin ?? null),
    col('probabilities', (r) => r.probabilities ?? null),
    col('span_side', (r) => r.span?.side ?? null),
    col('span_start', (r) => r.span?.start ?? null),
    col('span_end', (r) => r.span?.end ?? null),
    col('span_source', (r) => r.span?.source ?? null),
    col('groups', (r) => r.groups ?? null),
    col('s1_doc', (r) => r.s1_doc ?? null),
    col('s2_doc', (r) => r.s2_doc ?? null),
    col('s1_context', (r) => r.s1_context ?? null),
    col('s2_context', (r) => r.s2_context ?? null),
    col('split', (r) => r.split),
  ];
}

/**
 * hyparquet-writer, loaded only when Parquet is asked for: it imports a subpath ('hyparquet/src/*.js')
 * that the test runner's TypeScript loader cannot resolve, so the CLI must not load it eagerly (plain
 * node, dist/, resolves it fine; the Parquet test runs dist/cli.js).
 */
async function parquetFile(path: string): Promise<ParquetWriter> {
  const { fileWriter, ParquetWriter } = await import('hyparquet-writer');
  return new ParquetWriter({
    writer: fileWriter(path),
    schema: PARQUET_SCHEMA,
    createdBy: 'paramine export',
  });
}

/** One split's files: NAME.jsonl and NAME.parquet, written under temporary names and renamed at close. */
export class SplitSink {
  count = 0;
  private buffered: ExportRow[] = [];

  private constructor(
    readonly name: string,
    private readonly files: Array<[string, string]>,
    private readonly jsonl: ReturnType<typeof createWriteStream> | undefined,
    private readonly parquet: ParquetWriter | undefined,
  ) {}

  static async open(
    dir: string,
    name: string,
    formats: ReadonlyArray<'jsonl' | 'parquet'>,
  ): Promise<SplitSink> {
    const files: Array<[string, string]> = [];
    const target = (ext: string) => {
      const path = join(dir, `${name}.${ext}`);
      files.push([`${path}.tmp`, path]);
      return `${path}.tmp`;
    };
    const jsonl = formats.includes('jsonl') ? createWriteStream(target('jsonl')) : undefined;
    const parquet = formats.includes('parquet') ? await parquetFile(target('parquet')) : undefined;
    return new SplitSink(name, files, jsonl, parquet);
  }

  async add(row: ExportRow): Promise<void> {
    this.count++;
    if (this.jsonl && !this.jsonl.write(`${JSON.stringify(row)}\n`)) await once(this.jsonl, 'drain');
    if (this.parquet) {
      this.buffered.push(row);
      if (this.buffered.length === ROWS_PER_GROUP) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (!this.parquet || this.buffered.length === 0) return;
    const columnData = parquetColumns(this.buffered) as Parameters<ParquetWriter['write']>[0]['columnData'];
    await this.parquet.write({ columnData, rowGroupSize: ROWS_PER_GROUP });
    this.buffered = [];
  }

  /** Finishes the files and returns their paths. */
  async close(): Promise<string[]> {
    if (this.jsonl) {
      this.jsonl.end();
      await once(this.jsonl, 'finish');
    }
    if (this.parquet) {
      await this.flush();
      await this.parquet.finish();
    }
    for (const [tmp, path] of this.files) await publishFile(tmp, path);
    return this.files.map(([, path]) => path);
  }
}
