/**
 * `paramine add --index DIR --input FILE` and `paramine delete --index DIR --ids …`: the writes of
 * POST /v1/sentences and DELETE /v1/sentences/{id} from files (a process serving the index takes them in
 * within a second). Same normalization, dedup, embedding and durable transactions as the service
 * (src/service/writes.ts).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { addFlags, cli, flagValues } from '../config.js';
import { CORPUS_FORMATS, type CorpusRecord, readSentences } from '../corpus/index.js';
import { ParamineError } from '../errors.js';
import { createProgress } from '../progress.js';
import { type AddItem, type MetaFilter, openService } from '../service/index.js';
import { parseInput } from '../validate.js';

const BATCH = 256;

const indexFlag = z.string().min(1).register(cli, { flag: '--index <dir>', description: 'a built index' });
const modelFlag = z.string().min(1).optional().register(cli, {
  flag: '--model <name|dir>',
  description: 'encoder (default: the one the index was built with)',
});

const addSchema = z.object({
  index: indexFlag,
  model: modelFlag,
  input: z.array(z.string().min(1)).min(1).register(cli, {
    flag: '--input <files...>',
    description:
      'sentences to add: .txt, .jsonl (text + metadata; `id` is the client id), .tsv/.csv; .gz too',
  }),
  format: z.enum(CORPUS_FORMATS).optional().register(cli, {
    flag: '--format <format>',
    description: "every input's format, where its extension does not say it",
  }),
  seal: z.boolean().default(false).register(cli, {
    flag: '--seal',
    description:
      "seal every added sentence into a segment of the build's kind at the end (else: once the growing segment reaches the serve default)",
  }),
  quiet: z.boolean().default(false).register(cli, { flag: '--quiet', description: 'no progress bar' }),
});

const deleteSchema = z
  .object({
    index: indexFlag,
    model: modelFlag,
    ids: z
      .array(z.number().int().min(0))
      .optional()
      .register(cli, {
        flag: '--ids <ids>',
        description: 'sentence ids, comma-separated',
        parse: (v) =>
          v
            .split(',')
            .filter((x) => x.trim() !== '')
            .map(Number),
      }),
    input: z.string().min(1).optional().register(cli, {
      flag: '--input <file>',
      description: 'a file of sentence ids, one a line',
    }),
    where: z
      .array(z.string().regex(/^[^=]+=/, 'KEY=VALUE'))
      .optional()
      .register(cli, {
        flag: '--where <key=value...>',
        description: 'every sentence whose metadata has each KEY equal to VALUE (a takedown of a source)',
      }),
  })
  .refine((o) => [o.ids, o.input, o.where].filter((x) => x !== undefined).length === 1, {
    message: 'give --ids, --input or --where (one of them)',
    path: ['ids'],
  });

/** `key=value` flags as a metadata filter; a value also matches its number or boolean form. */
function filterOf(where: readonly string[]): MetaFilter {
  const filter: Record<string, Array<string | number | boolean>> = {};
  for (const w of where) {
    const at = w.indexOf('=');
    const [key, value] = [w.slice(0, at), w.slice(at + 1)];
    const forms: Array<string | number | boolean> = [value];
    if (value.trim() !== '' && Number.isFinite(Number(value))) forms.push(Number(value));
    if (value === 'true' || value === 'false') forms.push(value === 'true');
    filter[key] = [...(filter[key] ?? []), ...forms];
  }
  return filter;
}

function itemOf(r: CorpusRecord): AddItem {
  const { id, ...meta } = r.meta ?? {};
  return {
    text: r.text,
    ...(Object.keys(meta).length > 0 ? { meta } : {}),
    ...(typeof id === 'string' || typeof id === 'number' ? { clientId: String(id) } : {}),
  };
}

async function add(o: z.output<typeof addSchema>, log: (line: string) => void): Promise<void> {
  const service = await openService({ index: o.index, model: o.model, reranker: false });
  const counts = { added: 0, duplicate: 0, retried: 0 };
  let sealed = 0;
  const progress = createProgress({ label: 'adding', unit: 'sentences', quiet: o.quiet });
  try {
    let batch: AddItem[] = [];
    const flush = async () => {
      for (const r of await service.writes.add(batch)) counts[r.status]++;
      batch = [];
      const done = counts.added + counts.duplicate + counts.retried;
      progress.update(done, done);
    };
    for await (const r of readSentences(o.input, { format: o.format })) {
      if ('error' in r) throw r.error;
      batch.push(itemOf(r));
      if (batch.length === BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    if (o.seal) sealed = await service.writes.seal();
  } finally {
    progress.stop();
    await service.close();
  }
  log(
    `${counts.added} sentences added to ${o.index}, ${counts.duplicate} already there, ${counts.retried} added before (same id)` +
      (o.seal ? `; ${sealed} sealed` : ''),
  );
}

/** The ids of --ids or of the --input file (one a line). */
function idsOf(o: z.output<typeof deleteSchema>): number[] {
  return (
    o.ids ??
    readFileSync(o.input as string, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l, i) => {
        const id = Number(l.trim());
        if (!Number.isSafeInteger(id) || id < 0)
          throw new ParamineError('BAD_FILE', `${o.input}:${i + 1}: not a sentence id`, { field: 'input' });
        return id;
      })
  );
}

async function remove(o: z.output<typeof deleteSchema>, log: (line: string) => void): Promise<void> {
  const ids = o.where === undefined ? idsOf(o) : [];
  const service = await openService({ index: o.index, model: o.model, reranker: false });
  try {
    if (o.where !== undefined) {
      const { deleted } = await service.writes.deleteWhere(filterOf(o.where));
      log(`${deleted} sentences deleted from ${o.index} (metadata ${o.where.join(', ')})`);
      return;
    }
    const { deleted, missing } = await service.writes.delete(ids);
    log(
      `${deleted.length} sentences deleted from ${o.index}${missing.length > 0 ? `; no sentence with id ${missing.join(', ')}` : ''}`,
    );
    if (missing.length > 0) process.exitCode = 1;
  } finally {
    await service.close();
  }
}

export function register(program: Command): void {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const addCommand: Command = addFlags(
    program
      .command('add')
      .description('add sentences to a built index (a service serving it takes them in within a second)'),
    addSchema,
  ).action(async () => add(parseInput(addSchema, flagValues(addCommand, addSchema), 'options'), log));
  const deleteCommand: Command = addFlags(
    program
      .command('delete')
      .description('delete sentences from a built index by id or by metadata (tombstones)'),
    deleteSchema,
  ).action(async () =>
    remove(parseInput(deleteSchema, flagValues(deleteCommand, deleteSchema), 'options'), log),
  );
}
