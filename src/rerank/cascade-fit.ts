/**
 * `paramine models cascade`: scores labeled validation pairs with a student and a teacher cross-encoder (as
 * the service scores them: the models' own pair order, calibration and cuts), chooses the band of the
 * student's P(paraphrase) that goes to the teacher (cascade-band.ts), measures what each model costs per
 * pair on the same pairs, and writes the band into the student's config.json beside its cut.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { heldoutLines, type LabeledPair, pairsAtLines, readPairs } from '../corpus/index.js';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { detectScheme, positiveProbability } from '../text/labels.js';
import { type BandChoice, type BandSet, chooseBand } from './cascade-band.js';
import { CrossEncoder } from './cross-encoder.js';

export interface CascadeFitOptions {
  studentDir: string;
  teacherDir: string;
  /** The teacher as the student's config.json will name it (a model name, or a directory). */
  teacherName: string;
  /** Pair files, each optionally `FILE@HELDOUT.json` (only the held-out lines). */
  pairs: readonly string[];
  tolerance?: number | undefined;
  /** Write the band into the student's config.json (else report only). */
  write: boolean;
  log?: (line: string) => void;
}

export interface CascadeFit extends BandChoice {
  student: string;
  teacher: string;
  /** Seconds per pair of each model over all the sets, one order, the same pairs (this machine). */
  secondsPerPair: { student: number; teacher: number };
  /** Per set: the cascade's cost per pair over the student's alone (1 + escalated share x teacher / student). */
  cost: Record<string, number>;
}

async function readSet(spec: string): Promise<{ name: string; pairs: LabeledPair[] }> {
  const at = spec.lastIndexOf('@');
  const file = at > 0 ? spec.slice(0, at) : spec;
  const all = await readPairs(file);
  const pairs = at > 0 ? pairsAtLines(all, heldoutLines(spec.slice(at + 1))) : all;
  if (pairs.length === 0) throw new ParamineError('BAD_INPUT', `${spec}: no pairs`, { field: 'pairs' });
  if (pairs.some((p) => p.label === undefined)) {
    throw new ParamineError('BAD_FILE', `${file}: the band is chosen on labeled pairs; this file has none`, {
      field: 'pairs',
    });
  }
  return { name: spec, pairs };
}

/** Gold as booleans: the binary scheme's positives (1, paraphrase, yes, ...); other labels are refused. */
function goldOf(set: { name: string; pairs: LabeledPair[] }): boolean[] {
  const labels = set.pairs.map((p) => p.label as string);
  const scheme = detectScheme(labels);
  return labels.map((l) => {
    const pos = scheme.name === 'binary' ? scheme.isPositive(l) : undefined;
    if (pos === undefined) {
      throw new ParamineError('BAD_FILE', `${set.name}: label "${l}" is not binary (1/0, paraphrase / not)`, {
        field: 'pairs',
      });
    }
    return pos;
  });
}

async function scoreAll(ce: CrossEncoder, sets: { pairs: LabeledPair[] }[]) {
  const t0 = performance.now();
  const out: number[][] = [];
  for (const s of sets) {
    const scores = await ce.score(s.pairs.map((p) => [p.s1, p.s2] as const));
    out.push(scores.map((x) => positiveProbability(x.probabilities, ce.positiveLabels)));
  }
  return { p: out, seconds: (performance.now() - t0) / 1000 };
}

export async function fitCascade(o: CascadeFitOptions): Promise<CascadeFit> {
  const log = o.log ?? (() => {});
  const sets = await Promise.all(o.pairs.map(readSet));
  const n = sets.reduce((a, s) => a + s.pairs.length, 0);
  const scored: Array<{ name: string; p: number[][]; seconds: number; cut: number }> = [];
  for (const dir of [o.studentDir, o.teacherDir]) {
    const ce = await CrossEncoder.open(dir);
    try {
      if (ce.threshold === undefined || ce.labels.length !== 2) {
        throw new ParamineError('BAD_CONFIG', `${dir}: a cascade needs binary models with a label cut`, {
          field: 'config.json',
        });
      }
      await ce.score([['warm up', 'warm up']]);
      log(`scoring ${n} pairs with ${ce.modelId}`);
      scored.push({ name: ce.modelId, ...(await scoreAll(ce, sets)), cut: ce.threshold });
    } finally {
      await ce.close();
    }
  }
  const [student, teacher] = scored as [(typeof scored)[0], (typeof scored)[0]];
  const bandSets: BandSet[] = sets.map((s, i) => ({
    name: s.name,
    gold: goldOf(s),
    student: student.p[i] as number[],
    teacher: teacher.p[i] as number[],
  }));
  const choice = chooseBand(bandSets, {
    studentCut: student.cut,
    teacherCut: teacher.cut,
    tolerance: o.tolerance,
  });
  const ratio = teacher.seconds / student.seconds;
  const fit: CascadeFit = {
    ...choice,
    student: student.name,
    teacher: teacher.name,
    secondsPerPair: { student: student.seconds / n, teacher: teacher.seconds / n },
    cost: Object.fromEntries(choice.sets.map((s) => [s.name, 1 + s.escalated * ratio])),
  };
  if (o.write) await writeBand(o.studentDir, o.teacherName, fit);
  return fit;
}

async function writeBand(studentDir: string, teacher: string, fit: CascadeFit): Promise<void> {
  const path = join(studentDir, 'config.json');
  const config = JSON.parse(await readFile(path, 'utf8')) as { paramine?: Record<string, unknown> };
  config.paramine = {
    ...config.paramine,
    cascade: {
      teacher,
      band: fit.band,
      tolerance: fit.tolerance,
      met: fit.met,
      fitted_on: fit.sets.map((s) => `${s.name} (${s.pairs} pairs)`).join(' + '),
    },
  };
  await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`);
  await writeFileAtomic(join(studentDir, 'cascade.json'), `${JSON.stringify(fit, null, 2)}\n`);
}
