/**
 * The label cascade: the student scores every pair; the pairs whose P(paraphrase) falls in the band around
 * its cut, where the student is unsure, go to the teacher, whose label and probabilities replace the
 * student's. The band is chosen on validation pairs (`paramine models cascade`, cascade-band.ts) and written
 * into the student's config.json beside its cut. The teacher is opened on first need, so `fast` never pays
 * for it. When the teacher's queue refuses the unsure pairs (overload), `balanced` keeps the student's labels
 * for them rather than failing the call; `best` refuses.
 */
import { ParamineError } from '../errors.js';
import type {
  Calibration,
  LabelMode,
  Pair,
  PairScore,
  PairScorer,
  Reservation,
  ScoreOptions,
} from '../models/ports.js';
import { resolveModelDir } from '../models/resolve.js';
import { positiveProbability } from '../text/labels.js';
import { inBand } from './cascade-band.js';
import { CrossEncoder, type CrossEncoderOptions } from './cross-encoder.js';

export interface CascadeParts {
  student: PairScorer;
  /** The student's name, reported as the model of the pairs it labels. */
  studentName: string;
  /** Absent: no teacher configured (every mode labels with the student, and `best` is refused). */
  teacher?:
    | {
        name: string;
        /** Opens the teacher once, on the first pair that needs it. */
        open: () => Promise<PairScorer>;
        /** [low, high): the student's P(paraphrase) values that escalate in `balanced`. */
        band: readonly [number, number];
      }
    | undefined;
  /** The mode when a call names none (default `balanced`). */
  defaultMode?: LabelMode | undefined;
  /**
   * Each balanced call, for metrics: `pairs` of its `of` pairs labeled by the teacher, `shed` unsure pairs
   * left with the student because the teacher refused them (OVERLOADED).
   */
  onEscalated?: ((pairs: number, of: number, shed: number) => void) | undefined;
}

export class LabelCascade implements PairScorer {
  readonly labels: readonly string[];
  readonly positiveLabels: readonly string[];
  readonly calibration: Calibration | undefined;
  readonly rerankOrder: 'probability' | 'cosine' | undefined;
  readonly defaultMode: LabelMode;
  readonly #parts: CascadeParts;
  #teacher: Promise<PairScorer> | undefined;

  constructor(parts: CascadeParts) {
    this.#parts = parts;
    const { student } = parts;
    this.labels = student.labels;
    this.positiveLabels = student.positiveLabels;
    // The rank order's weights are the student's; the teacher's P is on the same calibrated scale.
    this.calibration = student.calibration;
    this.rerankOrder = student.rerankOrder;
    this.defaultMode = parts.defaultMode ?? 'balanced';
    if (student.admit) this.admit = (n: number) => student.admit?.(n);
    if (student.reserve) this.reserve = (n: number) => student.reserve?.(n) as Reservation;
  }

  admit?: (n: number) => void;
  /** The student's: it scores every pair in `fast` and `balanced` (`best` gives the place back). */
  reserve?: (n: number) => Reservation;

  /** What `balanced` does here: the teacher's name and band, or undefined when none is configured. */
  get teacher(): { name: string; band: readonly [number, number] } | undefined {
    const t = this.#parts.teacher;
    return t && { name: t.name, band: t.band };
  }

  async score(
    pairs: readonly Pair[],
    signal?: AbortSignal,
    options: ScoreOptions = {},
  ): Promise<PairScore[]> {
    const mode = options.mode ?? this.defaultMode;
    const { teacher, studentName } = this.#parts;
    if (mode === 'best') {
      options.reservation?.release();
      if (!teacher) throw noTeacher(studentName);
      return named(await (await this.#openTeacher()).score(pairs, signal), teacher.name);
    }
    const scores = named(
      await this.#parts.student.score(pairs, signal, { reservation: options.reservation }),
      studentName,
    );
    if (mode === 'fast' || !teacher || pairs.length === 0) return scores;
    const unsure: number[] = [];
    scores.forEach((s, i) => {
      if (inBand(positiveProbability(s.probabilities, this.positiveLabels), teacher.band)) unsure.push(i);
    });
    const asked = unsure.map((i) => pairs[i] as Pair);
    const second = asked.length === 0 ? [] : await this.#teacherOrShed(asked, signal);
    const labeled = second === undefined ? 0 : unsure.length;
    this.#parts.onEscalated?.(labeled, pairs.length, unsure.length - labeled);
    second?.forEach((s, k) => {
      scores[unsure[k] as number] = { ...s, model: teacher.name };
    });
    return scores;
  }

  /**
   * The teacher's scores, or undefined when its queue refused them: overload sheds the teacher, not the
   * request, and the unsure pairs keep the student's label (their model says so), an answer in time instead
   * of a 503. `best` is where the teacher is a must.
   */
  async #teacherOrShed(pairs: Pair[], signal?: AbortSignal): Promise<PairScore[] | undefined> {
    const t = await this.#openTeacher();
    try {
      return await t.score(pairs, signal);
    } catch (e) {
      if (e instanceof ParamineError && e.code === 'OVERLOADED') return undefined;
      throw e;
    }
  }

  #openTeacher(): Promise<PairScorer> {
    const t = this.#parts.teacher;
    if (!t) throw noTeacher(this.#parts.studentName);
    // A failed open is not cached: the next call tries again.
    this.#teacher ??= t.open().catch((e: unknown) => {
      this.#teacher = undefined;
      throw e;
    });
    return this.#teacher;
  }
}

/**
 * A cascade over a student directory, its teacher (config.json `paramine.cascade`) opened on first need: for
 * the commands that score pairs outside the service (benchmarks). `close()` closes both.
 */
export async function openLabeler(
  studentDir: string,
  o: CrossEncoderOptions & { mode?: LabelMode | undefined } = {},
): Promise<{ labeler: LabelCascade; student: CrossEncoder; close: () => Promise<void> }> {
  const { mode, ...opts } = o;
  const student = await CrossEncoder.open(studentDir, opts);
  const c = student.cascade;
  let teacher: CrossEncoder | undefined;
  const labeler = new LabelCascade({
    student,
    studentName: student.modelId,
    teacher: c && {
      name: c.teacher,
      band: c.band,
      open: async () => {
        teacher = await CrossEncoder.open(resolveModelDir(c.teacher, 'reranker'), opts);
        return teacher;
      },
    },
    defaultMode: mode,
  });
  return {
    labeler,
    student,
    close: async () => {
      await teacher?.close();
      await student.close();
    },
  };
}

function named(scores: PairScore[], model: string): PairScore[] {
  for (const s of scores) s.model = model;
  return scores;
}

function noTeacher(student: string): ParamineError {
  return new ParamineError(
    'BAD_INPUT',
    `labels mode "best" needs a teacher, and ${student} names none (config.json paramine.cascade); use "fast", or set one with paramine models cascade`,
    { field: 'labels.mode' },
  );
}
