/**
 * The client side of the serve benchmark: what the service says about its index, query sentences taken
 * from it, autocannon load on POST /v1/search, and the Markdown of the cells measured.
 */
import { z } from 'zod';

export type Mode = 'ann' | 'rerank';

export interface Cell {
  batching: 'on' | 'off';
  batchWaitMs: number;
  mode: Mode;
  /** ANN candidates fetched per query (reranked in rerank mode). */
  candidates: number;
  k: number;
  concurrency: number;
  durationS: number;
  requests: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; mean: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

const indexSchema = z.object({
  sentences: z.number().int(),
  manifest: z.object({
    factory: z.string(),
    metric: z.string(),
    ntotal: z.number(),
    shards: z.array(z.unknown()),
    model: z.object({ id: z.string() }),
  }),
});

const searchAnswer = z.object({
  results: z.array(z.object({ candidates: z.array(z.object({ label: z.string().optional() })) })),
});

interface Query {
  k: number;
  candidates: number;
}

function body(text: string, mode: Mode, o: Query): string {
  return JSON.stringify(
    mode === 'ann'
      ? { text, k: o.k, rerank: false }
      : { text, k: Math.min(o.k, o.candidates), candidates: o.candidates, rerank: true },
  );
}

/** The index behind the service, and whether it reranks (a reranked answer carries labels). */
export async function indexInfo(url: string) {
  const info = indexSchema.parse(await (await fetch(`${url}/v1/index`)).json());
  if (info.sentences === 0) throw new Error('the index is empty');
  const first = z.object({ text: z.string() }).parse(await (await fetch(`${url}/v1/sentences/0`)).json());
  const probe = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body(first.text, 'rerank', { k: 10, candidates: 20 }),
  });
  const answer = searchAnswer.parse(await probe.json());
  const m = info.manifest;
  return {
    sentences: info.sentences,
    reranker: answer.results[0]?.candidates.some((c) => c.label !== undefined) ?? false,
    index: {
      sentences: info.sentences,
      factory: m.factory,
      metric: m.metric,
      shards: m.shards.length,
      model: m.model.id,
    },
  };
}

/** `n` sentences spread evenly over the id range (a fixed stride, so every run asks the same ones). */
export async function sampleQueries(url: string, total: number, n: number): Promise<string[]> {
  const texts: string[] = [];
  const count = Math.min(n, total);
  for (let i = 0; i < count; i++) {
    const id = Math.floor(((i + 0.5) * total) / count);
    const res = await fetch(`${url}/v1/sentences/${id}`);
    if (!res.ok) continue;
    texts.push(z.object({ text: z.string() }).parse(await res.json()).text);
  }
  return texts;
}

/**
 * autocannon's closed loop on POST /v1/search: `connections` clients sending `bodies` round-robin for
 * `duration` seconds; `onResponse` sees every answer's status and latency.
 */
export async function searchLoad(
  url: string,
  bodies: readonly string[],
  connections: number,
  duration: number,
  onResponse?: (status: number, ms: number) => void,
) {
  // Loaded here: every `paramine` command loads this module, few of them drive load.
  const { default: autocannon } = await import('autocannon');
  let next = 0;
  return new Promise<import('autocannon').Result>((ok, fail) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration,
        timeout: 120,
        requests: [
          {
            method: 'POST',
            path: '/v1/search',
            headers: { 'content-type': 'application/json' },
            setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }),
          },
        ],
      },
      (err: unknown, result) => (err ? fail(err) : ok(result)),
    );
    if (onResponse) {
      instance.on('response', (_c: unknown, status: number, _b: number, ms: number) =>
        onResponse(status, ms),
      );
    }
  });
}

/** `connections` clients sending the queries round-robin for `duration` seconds. */
export async function drive(
  url: string,
  o: Query,
  texts: readonly string[],
  mode: Mode,
  connections: number,
  duration: number,
): Promise<Omit<Cell, 'batching' | 'batchWaitMs'>> {
  const r = await searchLoad(
    url,
    texts.map((t) => body(t, mode, o)),
    connections,
    duration,
  );
  const { p50, p90, p99, mean, max } = r.latency;
  return {
    mode,
    candidates: mode === 'rerank' ? o.candidates : o.k,
    k: mode === 'rerank' ? Math.min(o.k, o.candidates) : o.k,
    concurrency: connections,
    durationS: r.duration,
    requests: r.requests.total,
    rps: r.requests.total / r.duration,
    latencyMs: { p50, p90, p99, mean, max },
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

/** What the Markdown reads of a serve run (serve-bench.ts's result has it). */
export interface ServeReport {
  cells: Cell[];
  index: { sentences: number; factory: string; shards: number; model: string };
  queries: number;
  durationS: number;
  machine: { cpus: number; cpuModel: string; loadavgBefore: number[]; loadavgAfter: number[] };
}

export function serveMarkdown(r: ServeReport): string {
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines = [
    '| search | batching | concurrency | req/s | p50 ms | p90 ms | p99 ms | requests | non-2xx / errors |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of r.cells) {
    const what = c.mode === 'ann' ? `ANN only, k ${c.k}` : `rerank top ${c.candidates}, k ${c.k}`;
    const batching = c.batching === 'on' ? `on (${c.batchWaitMs} ms)` : 'off';
    lines.push(
      `| ${what} | ${batching} | ${c.concurrency} | ${fmt(c.rps)} | ${fmt(c.latencyMs.p50)} | ${fmt(c.latencyMs.p90)} | ${fmt(c.latencyMs.p99)} | ${c.requests} | ${c.non2xx} / ${c.errors} |`,
    );
  }
  const loads = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  lines.push(
    '',
    `${r.index.sentences} sentences (${r.index.factory}, ${r.index.shards} shard(s), ${r.index.model}); ` +
      `${r.queries} distinct queries; ${r.durationS} s per cell; ${r.machine.cpus} CPUs (${r.machine.cpuModel}); ` +
      `load average ${loads(r.machine.loadavgBefore)} before, ${loads(r.machine.loadavgAfter)} after`,
  );
  return `${lines.join('\n')}\n`;
}
