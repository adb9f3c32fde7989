/**
 * `paramine docs align --index DIR --out FILE`: the document pairs of an index built from documents
 * (src/jobs/align.ts), one JSON line each: {"a", "b", "score"} with the documents' ids as the input gave them.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { addFlags, cli, flagValues } from '../config.js';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { alignOptionsSchema } from '../jobs/align.js';
import { bandText } from '../jobs/align-band.js';
import { clearCheckpoint } from '../jobs/align-checkpoint.js';
import { alignIndexDir } from '../jobs/align-index.js';
import { NEAREST_UNITS } from '../jobs/align-search.js';
import { stagedProgress } from '../progress.js';
import { DEFAULT_SHARE_SIZE } from '../queue/options.js';
import { parseInput } from '../validate.js';

const where = z.object({
  index: z.string().min(1).register(cli, {
    flag: '--index <dir>',
    description: 'index built from documents (`paramine index --documents`)',
  }),
  out: z.string().min(1).register(cli, { flag: '--out <file>', description: 'document pairs as JSON lines' }),
  work: z.string().min(1).optional().register(cli, {
    flag: '--work <dir>',
    description:
      'where the run keeps its work (the document index, each searched batch) so that the same command, run again after a crash, goes on where it stopped (default: OUT.partial; removed once OUT is written)',
  }),
  queue: z.string().min(1).optional().register(cli, {
    flag: '--queue <url>',
    description:
      "search the documents on this queue's workers (`paramine worker`): redis://HOST:PORT/DB; needs --work, shared by every worker (docs/distributed.md)",
  }),
  shareSize: z.number().int().min(1).default(DEFAULT_SHARE_SIZE).register(cli, {
    flag: '--share-size <n>',
    description: 'with --queue: documents a worker searches per job (whole batches of 16,384)',
  }),
  report: z.string().min(1).optional().register(cli, {
    flag: '--report <file>',
    description:
      'print the histogram of each document’s nearest partner score with the band it proposes, and write it (JSON)',
  }),
});

export function register(program: Command): void {
  const docs = program
    .command('docs')
    .description('documents of an index: pairs of documents rich in paraphrases');
  const align: Command = addFlags(
    addFlags(
      docs.command('align').description('pair documents by similarity, inside a band (Turku phase 1)'),
      where,
    ),
    alignOptionsSchema,
  ).action(async () => {
    const given = parseInput(where, flagValues(align, where), 'options');
    const { index, out, report, queue, shareSize } = given;
    if (queue !== undefined && given.work === undefined) {
      throw new ParamineError('BAD_INPUT', '--queue needs --work: a directory every worker mounts', {
        field: 'work',
      });
    }
    const work = given.work ?? `${out}.partial`;
    const options = flagValues(align, alignOptionsSchema);
    const started = performance.now();
    const progress = stagedProgress('docs align', NEAREST_UNITS);
    // BullMQ is loaded only when the search goes through the queue.
    const distribute =
      queue === undefined
        ? undefined
        : (await import('../queue/align.js')).distributeAlignment({
            queue,
            work,
            index,
            options,
            shareSize,
            quiet: !process.stderr.isTTY,
          });
    const { pairs, band, copies, resumed } = await alignIndexDir(index, options, {
      onProgress: (stage, done, total, readBack) => progress.update(stage, done, total, readBack),
      work,
      distribute,
    });
    progress.stop();
    if (resumed?.index) {
      process.stderr.write(
        `resumed from ${work}: the document index and ${resumed.searched} documents' nearest lists read back\n`,
      );
    }
    const lines = (xs: object[]) => xs.map((x) => `${JSON.stringify(x)}\n`).join('');
    await writeFileAtomic(out, lines(pairs));
    // Which documents were near copies (at or above --max) of the one that stood for them in the pairs.
    const copiesFile = `${out.replace(/\.jsonl?$/, '')}.copies.jsonl`;
    if (copies.length > 0) await writeFileAtomic(copiesFile, lines(copies));
    await clearCheckpoint(work);
    if (report) {
      await writeFileAtomic(report, `${JSON.stringify(band, null, 1)}\n`);
      process.stderr.write(`${bandText(band)}\n(written to ${report})\n`);
    }
    process.stderr.write(
      `${pairs.length} document pairs in [${band.min}, ${band.max}) (min: ${band.from.min}, max: ${band.from.max}) -> ${out} ` +
        `(${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
    );
    if (copies.length > 0) {
      const n = copies.reduce((s, c) => s + c.copies.length, 0);
      process.stderr.write(
        `${n} documents were near copies (score >= ${band.max}) of ${copies.length} others, which stood for them in the pairs -> ${copiesFile}\n`,
      );
    }
  });
}
