/**
 * Who labels a pair, wired once for every front end: the student cross-encoder behind its batcher and, where
 * its config.json names a teacher (`paramine.cascade`), the teacher behind a batcher of its own, opened on the
 * first pair that reaches it (rerank/cascade.ts). Interactive and bulk ports share both models.
 */
import { ParamineError } from '../errors.js';
import { readModelDir } from '../models/dir.js';
import type { LabelMode } from '../models/ports.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder, LabelCascade } from '../rerank/index.js';
import type { BatchedScorer } from './batched.js';

export interface LabelerOptions {
  spinning?: boolean | undefined;
  workers?: number | undefined;
  /** The mode when a request names none (default `balanced`). */
  mode?: LabelMode | undefined;
  /** Called once the teacher is open, with what closes it. */
  onTeacher: (close: () => Promise<void>) => void;
  onEscalated?: ((pairs: number, of: number, shed: number) => void) | undefined;
  /**
   * Open the teacher now, in the background, instead of on the first unsure pair (`paramine serve`: that
   * request would wait the 2-3 s it takes). A failure here is left to that first pair to report.
   */
  warm?: boolean | undefined;
}

/** Cascade ports over the student's batcher: `port(unbounded)` as BatchedScorer's. */
export function labelPorts(
  student: CrossEncoder,
  studentBatched: BatchedScorer,
  batcher: (scorer: CrossEncoder) => BatchedScorer,
  o: LabelerOptions,
): (unbounded: boolean) => LabelCascade {
  const c = student.cascade;
  let teacher: Promise<BatchedScorer> | undefined;
  const openTeacher = (name: string) => {
    teacher ??= (async () => {
      const t = await CrossEncoder.open(resolveModelDir(name, 'reranker'), {
        spinning: o.spinning,
        workers: o.workers,
      });
      o.onTeacher(() => t.close());
      checkSameLabels(student, t);
      return batcher(t);
    })().catch((e: unknown) => {
      teacher = undefined;
      throw e;
    });
    return teacher;
  };
  if (c && o.warm && o.mode !== 'fast') openTeacher(c.teacher).catch(() => undefined);
  return (unbounded) =>
    new LabelCascade({
      student: studentBatched.port(unbounded),
      studentName: student.modelId,
      teacher: c && {
        name: c.teacher,
        band: c.band,
        open: async () => (await openTeacher(c.teacher)).port(unbounded),
      },
      defaultMode: o.mode,
      onEscalated: o.onEscalated,
    });
}

export interface LabelCuts {
  /** The student's name: the labeling model of pairs that name none (jobs from before pairs did). */
  student: string | undefined;
  /** Each labeling model's cut, by name. */
  cuts: Record<string, number>;
}

/** The label cut of the student and of its teacher (read from its config.json, not opened). */
export async function labelCuts(student: CrossEncoder | undefined): Promise<LabelCuts> {
  const cuts: Record<string, number> = {};
  if (student === undefined) return { student: undefined, cuts };
  if (student.threshold !== undefined) cuts[student.modelId] = student.threshold;
  const teacher = student.cascade?.teacher;
  if (teacher !== undefined) {
    const cut = (await readModelDir(resolveModelDir(teacher, 'reranker'))).config.paramine?.threshold;
    if (cut !== undefined) cuts[teacher] = cut;
  }
  return { student: student.modelId, cuts };
}

function checkSameLabels(student: CrossEncoder, teacher: CrossEncoder): void {
  const same =
    student.labels.length === teacher.labels.length &&
    student.labels.every((l, i) => teacher.labels[i] === l) &&
    student.positiveLabels.join('\n') === teacher.positiveLabels.join('\n');
  if (!same) {
    throw new ParamineError(
      'BAD_CONFIG',
      `${student.modelId}: its cascade teacher ${teacher.modelId} labels ${teacher.labels.join(', ')}, the student ${student.labels.join(', ')}; a teacher must have the student's labels`,
      { field: 'config.json' },
    );
  }
}
