/**
 * Every committed int8 graph gives the same answers on an AVX2-only CPU as on this one. ONNX Runtime's u8s8
 * kernels saturate on x86-64 AVX2 without VNNI (src/models/int8-kernels.ts); the runtime probes for that and
 * switches to exact kernels. The AVX2-only path is qemu-user with `-cpu Haswell`, which hides AVX-512 and VNNI
 * from ORT's CPU dispatch. The teacher run there with the switch off is the control: it drifts, so the
 * check can fail.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';

const QEMU = '/usr/bin/qemu-x86_64';
// CPUID bits TCG cannot emulate; named off so qemu does not warn about each one.
const HASWELL = 'Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm';
const TOLERANCE = 0.02;
const TEACHER = 'models/paramine-paraphrase-mpnet-base';

/** The committed models (the directories .gitignore lets in) with their kind. */
function committed(): string[] {
  const kinds: Record<string, string> = {
    'paramine-minilm-paraphrase-ft-q': 'encoder',
    'paramine-span-minilm-q': 'span',
  };
  return readdirSync('models')
    .filter((d) => d.startsWith('paramine-') && existsSync(join('models', d, 'config.json')))
    .filter(
      (d) => spawnSync('git', ['ls-files', '--error-unmatch', join('models', d, 'config.json')]).status === 0,
    )
    .map((d) => `${kinds[d] ?? 'reranker'}=${join('models', d)}`);
}

interface Scored {
  saturates: boolean;
  out: Record<string, number[]>;
}

function score(models: string[], emulated: boolean, env: Record<string, string> = {}): Scored {
  const node = [process.execPath, ...process.execArgv, 'test/helpers/int8-score.ts', ...models];
  const [cmd, ...args] = emulated ? [QEMU, '-cpu', HASWELL, ...node] : node;
  const r = spawnSync(cmd as string, args, {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Scored;
}

const maxDiff = (a: number[], b: number[]) =>
  Math.max(...a.map((x, i) => Math.abs(x - (b[i] ?? Number.NaN))));

const missing = !existsSync(QEMU);
t.test(
  'committed int8 graphs: the AVX2-only path agrees with this CPU within 0.02',
  // CI installs qemu-user (scripts/setup); elsewhere the test says what it needs.
  { skip: missing && !process.env.CI ? 'needs qemu-user (apt-get install qemu-user)' : false },
  async (t) => {
    t.ok(!missing, `${QEMU} is installed`);
    const models = committed();
    t.ok(models.length >= 7, `the committed graphs: ${models.join(', ')}`);
    const native = score(models, false);
    const haswell = score(models, true);
    t.ok(haswell.saturates, 'the probe sees saturating u8s8 kernels on Haswell');
    for (const m of models) {
      const path = m.split('=')[1] as string;
      const d = maxDiff(native.out[path] ?? [], haswell.out[path] ?? []);
      t.ok(d <= TOLERANCE, `${path}: max |native - Haswell| = ${d.toExponential(2)}`);
    }
    // The control: the teacher without the exact kernels on Haswell, as ORT runs it by default.
    const raw = score([`reranker=${TEACHER}`], true, { PARAMINE_INT8_PRECISION: 'off' });
    const d = maxDiff(native.out[TEACHER] ?? [], raw.out[TEACHER] ?? []);
    t.ok(d > TOLERANCE, `without them the teacher drifts by ${d.toFixed(3)} on Haswell`);
  },
);
