/**
 * Choosing the cascade's band on validation pairs: the narrowest [low, high) around the student's cut whose
 * cascade F1 is within `tolerance` points of the teacher's on every set, where narrowest means the fewest
 * pairs escalated (the mean share over the sets, each weighted once, as the teacher's cost follows it).
 */

export interface BandSet {
  name: string;
  /** Gold: is the pair a paraphrase. */
  gold: readonly boolean[];
  /** The student's and the teacher's reported P(paraphrase), pair by pair. */
  student: readonly number[];
  teacher: readonly number[];
}

export interface BandOptions {
  studentCut: number;
  teacherCut: number;
  /** F1 points the cascade may lose to the teacher on each set (default 0.5). */
  tolerance?: number | undefined;
  /** Grid step on P (default 0.01). */
  step?: number | undefined;
}

export interface SetOutcome {
  name: string;
  pairs: number;
  f1: { student: number; teacher: number; cascade: number };
  precision: { student: number; teacher: number; cascade: number };
  accuracy: { student: number; teacher: number; cascade: number };
  /** Share of the set's pairs the cascade sends to the teacher. */
  escalated: number;
}

export interface BandChoice {
  band: [number, number];
  /** False when no band met the tolerance: the band is then the one that came closest. */
  met: boolean;
  tolerance: number;
  sets: SetOutcome[];
}

interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

const percent = (x: number) => Math.round(1000 * x) / 10;

/** Whether the student's P(paraphrase) `p` escalates: low <= p < high (a high of 1 includes 1). */
export function inBand(p: number, [lo, hi]: readonly [number, number]): boolean {
  return p >= lo && (p < hi || hi >= 1);
}

function metrics(c: Counts): { f1: number; precision: number; accuracy: number } {
  const precision = c.tp + c.fp === 0 ? 0 : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? 0 : c.tp / (c.tp + c.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return {
    f1: 100 * f1,
    precision: 100 * precision,
    accuracy: (100 * (c.tp + c.tn)) / (c.tp + c.fp + c.fn + c.tn),
  };
}

function count(gold: readonly boolean[], predicted: (i: number) => boolean): Counts {
  const c: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  gold.forEach((g, i) => {
    const p = predicted(i);
    if (p && g) c.tp++;
    else if (p) c.fp++;
    else if (g) c.fn++;
    else c.tn++;
  });
  return c;
}

/** One set's student, teacher and cascade figures for a band. */
export function outcome(set: BandSet, band: readonly [number, number], o: BandOptions): SetOutcome {
  const escalate = (i: number) => inBand(set.student[i] as number, band);
  const student = metrics(count(set.gold, (i) => (set.student[i] as number) >= o.studentCut));
  const teacher = metrics(count(set.gold, (i) => (set.teacher[i] as number) >= o.teacherCut));
  const cascade = metrics(
    count(set.gold, (i) =>
      escalate(i) ? (set.teacher[i] as number) >= o.teacherCut : (set.student[i] as number) >= o.studentCut,
    ),
  );
  const n = set.gold.length;
  let escalated = 0;
  for (let i = 0; i < n; i++) if (escalate(i)) escalated++;
  return {
    name: set.name,
    pairs: n,
    f1: {
      student: percent(student.f1 / 100),
      teacher: percent(teacher.f1 / 100),
      cascade: percent(cascade.f1 / 100),
    },
    precision: {
      student: percent(student.precision / 100),
      teacher: percent(teacher.precision / 100),
      cascade: percent(cascade.precision / 100),
    },
    accuracy: {
      student: percent(student.accuracy / 100),
      teacher: percent(teacher.accuracy / 100),
      cascade: percent(cascade.accuracy / 100),
    },
    escalated: n === 0 ? 0 : escalated / n,
  };
}

interface BandCandidate {
  band: [number, number];
  cost: number;
  width: number;
  slack: number;
  met: boolean;
}

function better(a: BandCandidate, b: BandCandidate): boolean {
  if (a.met !== b.met) return a.met;
  if (!a.met) return a.slack > b.slack + 1e-12;
  if (Math.abs(a.cost - b.cost) > 1e-12) return a.cost < b.cost;
  return a.width < b.width - 1e-12;
}

/** The narrowest band meeting the tolerance on every set (or, failing that, the one closest to it). */
export function chooseBand(sets: readonly BandSet[], o: BandOptions): BandChoice {
  const tolerance = o.tolerance ?? 0.5;
  const step = o.step ?? 0.01;
  const grid = (from: number, to: number) => {
    const out: number[] = [];
    for (let k = Math.ceil(from / step - 1e-9); k * step <= to + 1e-9; k++)
      out.push(Math.round(k * step * 1e6) / 1e6);
    return out;
  };
  // Met bands: the fewest pairs escalated, then the narrowest; if none is met, the smallest worst-set gap.
  let best: BandCandidate | undefined;
  for (const lo of grid(0, o.studentCut)) {
    for (const hi of grid(o.studentCut, 1)) {
      const band: [number, number] = [lo, hi];
      const outs = sets.map((s) => outcome(s, band, o));
      const cost = outs.reduce((a, s) => a + s.escalated, 0) / Math.max(outs.length, 1);
      // The worst set's F1 gap to the teacher, in points.
      const slack = Math.min(...outs.map((s) => s.f1.cascade - s.f1.teacher));
      const c = { band, cost, width: hi - lo, slack, met: slack >= -tolerance - 1e-9 };
      if (best === undefined || better(c, best)) best = c;
    }
  }
  const band = best?.band ?? [0, 1];
  return {
    band,
    met: best?.met ?? false,
    tolerance,
    sets: sets.map((s) => outcome(s, band, o)),
  };
}
