/**
 * The label cascade with the committed student and teacher: `fast` never opens the teacher, `balanced` sends
 * exactly the pairs whose student P falls in the band, `best` labels every pair with the teacher, and each
 * pair names its model. The band chooser picks the narrowest band within the tolerance.
 */
import { existsSync } from 'node:fs';
import t from 'tap';
import { CrossEncoder, chooseBand, inBand, LabelCascade } from '../../src/rerank/index.js';
import { BatchedScorer, DEFAULT_RERANKER } from '../../src/service/index.js';

const STUDENT = `models/${DEFAULT_RERANKER}`;
const TEACHER = 'models/paramine-paraphrase-mpnet-base';
const HAVE = existsSync(`${STUDENT}/config.json`) && existsSync(`${TEACHER}/config.json`);

const PAIRS: Array<readonly [string, string]> = [
  [
    'A powerful storm knocked out power to more than 120,000 homes on Tuesday.',
    'More than 120,000 households lost electricity after a powerful storm on Tuesday.',
  ],
  [
    'Firefighters were battling a wildfire that has burned 8,500 acres.',
    'A wildfire north of Pine Valley has scorched some 8,500 acres.',
  ],
  ['The cat sat on the mat.', 'Stock markets fell sharply on Monday.'],
  ['The central bank raised rates by a quarter point.', 'The central bank left rates unchanged.'],
  ['He plays the guitar.', 'She does not play any instrument.'],
  ['The vote was postponed until next week.', 'The committee delayed the vote to next week.'],
];

t.test('fast / balanced / best with the committed models', { skip: !HAVE }, async (t) => {
  const student = await CrossEncoder.open(STUDENT);
  const teacher = await CrossEncoder.open(TEACHER);
  t.teardown(async () => {
    await student.close();
    await teacher.close();
  });
  const band = student.cascade?.band;
  t.ok(band, "the default student's config names a teacher and a band");
  if (!band) return;
  let opened = 0;
  const cascade = new LabelCascade({
    student,
    studentName: student.modelId,
    teacher: {
      name: teacher.modelId,
      band,
      open: async () => {
        opened++;
        return teacher;
      },
    },
  });
  const fast = await cascade.score(PAIRS, undefined, { mode: 'fast' });
  t.equal(opened, 0, 'fast never opens the teacher');
  t.ok(fast.every((s) => s.model === student.modelId));

  const alone = await teacher.score(PAIRS);
  const balanced = await cascade.score(PAIRS);
  balanced.forEach((s, i) => {
    const unsure = inBand(fast[i]?.probabilities.paraphrase as number, band);
    t.equal(s.model, unsure ? teacher.modelId : student.modelId, `pair ${i}: labeled by the right model`);
    t.same(s.probabilities, unsure ? alone[i]?.probabilities : fast[i]?.probabilities);
  });
  t.ok(opened <= 1, 'the teacher opened once at most');

  const best = await cascade.score(PAIRS, undefined, { mode: 'best' });
  t.same(
    best.map((s) => s.probabilities),
    alone.map((s) => s.probabilities),
  );
  t.ok(best.every((s) => s.model === teacher.modelId));
});

t.test(
  'an overloaded teacher is shed in balanced (the student labels), refused in best',
  { skip: !HAVE },
  async (t) => {
    const student = await CrossEncoder.open(STUDENT);
    const teacher = await CrossEncoder.open(TEACHER);
    t.teardown(async () => {
      await student.close();
      await teacher.close();
    });
    const band = student.cascade?.band as readonly [number, number];
    // The teacher behind a real queue that holds 2 pairs waiting: kept busy and full, it refuses.
    const queue = new BatchedScorer(teacher, { maxBatch: 64, maxWaitMs: 0, maxQueue: 2 });
    const seen: number[][] = [];
    const cascade = new LabelCascade({
      student,
      studentName: student.modelId,
      teacher: { name: teacher.modelId, band, open: async () => queue.port(false) },
      onEscalated: (pairs, of, shed) => seen.push([pairs, of, shed]),
    });
    const fast = await cascade.score(PAIRS, undefined, { mode: 'fast' });
    const unsure = fast.filter((s) => inBand(s.probabilities.paraphrase as number, band)).length;
    t.ok(unsure > 0, `${unsure} of the pairs are in the band`);

    // 48 pairs of a job in the model (one batch, seconds of MPNet), 2 interactive ones waiting behind them.
    const bulk = queue.port(true).score(Array.from({ length: 8 }, () => PAIRS).flat());
    const waiting = queue.port(false).score(PAIRS.slice(0, 2));
    const shed = await cascade.score(PAIRS);
    t.same(
      shed.map((s) => [s.model, s.label, s.probabilities]),
      fast.map((s) => [s.model, s.label, s.probabilities]),
      "every pair keeps the student's label and names the student",
    );
    t.same(seen.at(-1), [0, PAIRS.length, unsure], 'reported as shed, not escalated');
    await t.rejects(
      cascade.score(PAIRS, undefined, { mode: 'best' }),
      { code: 'OVERLOADED' },
      'best refuses',
    );
    await Promise.all([bulk, waiting]);

    const idle = await cascade.score(PAIRS);
    t.equal(idle.filter((s) => s.model === teacher.modelId).length, unsure, 'idle again: the teacher labels');
    t.same(seen.at(-1), [unsure, PAIRS.length, 0]);
  },
);

t.test('best without a teacher is refused, naming the fix', async (t) => {
  const fake = {
    labels: ['not_paraphrase', 'paraphrase'],
    positiveLabels: ['paraphrase'],
    score: async () => [],
  };
  const cascade = new LabelCascade({ student: fake, studentName: 'x' });
  await t.rejects(cascade.score([['a', 'b']], undefined, { mode: 'best' }), {
    code: 'BAD_INPUT',
    message: /paramine models cascade/,
  });
  t.same(
    await cascade.score([], undefined, { mode: 'balanced' }),
    [],
    'balanced without a teacher: the student',
  );
});

t.test('chooseBand: the narrowest band within the tolerance', async (t) => {
  // Student cut 0.5, teacher cut 0.5. The teacher is right everywhere; the student is wrong on the pairs at
  // 0.45 and 0.55 only: the band must cover those two and nothing else is needed.
  const student = [0.1, 0.2, 0.45, 0.55, 0.8, 0.9, 0.3, 0.7];
  const gold = [false, false, true, false, true, true, false, true];
  const teacher = gold.map((g) => (g ? 0.9 : 0.1));
  const choice = chooseBand([{ name: 's', gold, student, teacher }], {
    studentCut: 0.5,
    teacherCut: 0.5,
    tolerance: 0,
  });
  t.ok(choice.met);
  t.same(choice.band, [0.45, 0.56]);
  t.equal(choice.sets[0]?.f1.cascade, 100);
  t.equal(choice.sets[0]?.escalated, 0.25);
  // A tolerance the student meets alone: an empty band.
  const loose = chooseBand([{ name: 's', gold, student, teacher }], {
    studentCut: 0.5,
    teacherCut: 0.5,
    tolerance: 100,
  });
  t.equal(loose.sets[0]?.escalated, 0);
});
