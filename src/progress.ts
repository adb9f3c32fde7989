/**
 * Progress for long work: a cli-progress bar with rate and ETA on a TTY, a log line every few
 * seconds otherwise (CI logs, nohup, systemd), so a days-long build always shows where it is.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  /** done and total in the same unit; total may grow (or be unknown: 0). */
  update(done: number, total: number, extra?: Record<string, string | number>): void;
  /** `done` units were done before this run (a resumed run's, read back): not counted in its rate. */
  readBack(done: number): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  unit: string;
  /** Log-line interval when not on a TTY. */
  intervalMs?: number;
  stream?: NodeJS.WriteStream;
  quiet?: boolean;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.quiet) return { update() {}, readBack() {}, stop() {} };
  const started = Date.now();
  let base = 0;
  const rate = (done: number) => (done - base) / Math.max((Date.now() - started) / 1000, 1e-3);
  // Unknown ('?') until this run has done some of the work left.
  const eta = (done: number, total: number) => {
    const r = rate(done);
    return total <= done ? '0s' : r > 0 ? formatDuration((total - done) / r) : '?';
  };
  const readBack = (done: number) => {
    base = done;
  };

  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit} | {rate}/s | ETA {eta_h} {info}`,
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(1, 0, { rate: '0', eta_h: '?', info: '' });
    return {
      update(done, total, extra = {}) {
        bar.setTotal(Math.max(total, done, 1));
        bar.update(done, {
          rate: rate(done).toFixed(0),
          eta_h: eta(done, total),
          info: Object.entries(extra)
            .map(([k, v]) => `${k} ${v}`)
            .join(' '),
        });
      },
      readBack,
      stop: () => bar.stop(),
    };
  }

  const every = options.intervalMs ?? 10_000;
  let last = 0;
  let lastLine = '';
  // The last line written: stop() adds the final one only when the interval did not just print it.
  let written = '';
  const line = (done: number, total: number, extra: Record<string, string | number>) => {
    const pct = total > 0 ? ` (${((100 * done) / total).toFixed(1)}%)` : '';
    const more = Object.entries(extra).map(([k, v]) => ` ${k}=${v}`);
    return `${options.label}: ${done}${total > 0 ? `/${total}` : ''} ${options.unit}${pct}, ${rate(done).toFixed(0)}/s, ETA ${eta(done, total)}${more.join('')}\n`;
  };
  return {
    readBack,
    update(done, total, extra = {}) {
      lastLine = line(done, total, extra);
      if (Date.now() - last >= every) {
        last = Date.now();
        stream.write(lastLine);
        written = lastLine;
      }
    },
    stop() {
      if (lastLine && lastLine !== written) stream.write(lastLine);
    },
  };
}

/** Progress of work in stages: one bar (or log line) per stage, the previous one stopped when the next begins. */
export function stagedProgress(
  label: string,
  /** One unit for every stage, or one per stage (a stage not named counts in `unit.default`). */
  unit: string | { default: string; [stage: string]: string },
  quiet = false,
  stream?: ProgressOptions['stream'],
): { update(stage: string, done: number, total: number, readBack?: boolean): void; stop(): void } {
  const unitOf = (stage: string) => (typeof unit === 'string' ? unit : (unit[stage] ?? unit.default));
  let current: { stage: string; bar: Progress } | undefined;
  return {
    update(stage, done, total, readBack = false) {
      if (current?.stage !== stage) {
        current?.bar.stop();
        current = {
          stage,
          bar: createProgress({ label: `${label}: ${stage}`, unit: unitOf(stage), quiet, stream }),
        };
      }
      if (readBack) current.bar.readBack(done);
      current.bar.update(done, total);
    },
    stop: () => current?.bar.stop(),
  };
}
