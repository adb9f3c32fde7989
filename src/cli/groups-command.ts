/** `paramine groups`: build and list the group tables of an index (mining within groups reads them). */
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { readManifest } from '../index/index.js';
import { buildGroupTables, describeGroupTable } from '../indexer/groups.js';
import { formatDuration } from '../progress.js';
import { GROUPS_DIR, GroupTables, groupTableIdentity, parseGroupKeySpec } from '../store/index.js';

export function register(program: Command): void {
  const groups = program
    .command('groups')
    .description('group tables of an index: value -> sentence ids, for mining within a group or a window');
  groups
    .command('build')
    .description('build (or rebuild) the tables of these keys in one pass over the store')
    .requiredOption('--index <dir>', 'index directory')
    .requiredOption(
      '--key <keys...>',
      'metadata keys; KEY:date or KEY:number for ordered keys (windows); `term` falls back to the definition tagger',
    )
    .option('--quiet', 'no progress output', false)
    .action(async (o: { index: string; key: string[]; quiet: boolean }) => {
      const started = Date.now();
      const specs = o.key
        .flatMap((k) => k.split(','))
        .filter((k) => k !== '')
        .map(parseGroupKeySpec);
      const infos = await buildGroupTables(o.index, specs, { quiet: o.quiet });
      for (const info of infos) process.stdout.write(`${describeGroupTable(info)}\n`);
      process.stdout.write(`wall time ${formatDuration((Date.now() - started) / 1000)}\n`);
    });
  groups
    .command('list')
    .description('the tables an index has')
    .requiredOption('--index <dir>', 'index directory')
    .action(async (o: { index: string }) => {
      const dir = resolve(o.index);
      const manifest = await readManifest(dir);
      const identity = groupTableIdentity(manifest);
      const tables = GroupTables.open(join(dir, GROUPS_DIR), identity);
      const infos = tables?.list() ?? [];
      for (const info of infos) {
        const stale = info.index === identity ? '' : ' [stale: built for another build of the index]';
        process.stdout.write(`${describeGroupTable(info)}${stale}\n`);
      }
      if (infos.length === 0) process.stdout.write('no group tables\n');
      await tables?.close();
    });
}
