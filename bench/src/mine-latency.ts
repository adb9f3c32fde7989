/** Search latency of `paramine serve` over a mined index, idle and while the service runs a mining job. */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { spawnServe } from '../../dist/testing/index.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

/** Milliseconds of `requests` searches one after another, over the texts in a fixed stride. */
async function latencies(url: string, texts: readonly string[], requests: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < requests; i++) {
    const text = texts[(i * 7919) % texts.length] as string;
    const t0 = performance.now();
    const r = await fetch(`${url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text, k: 10, rerank: false }),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`search answered ${r.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

const jobSchema = z.object({ id: z.string(), state: z.string(), processed: z.number(), total: z.number() });

export async function latencyPhases(
  index: string,
  texts: readonly string[],
  o: { k: number; requests: number },
) {
  const svc = await spawnServe([CLI, 'serve', '--index', index, '--no-reranker', '--log-level', 'info'], {
    stderr: 'inherit',
  });
  try {
    await latencies(svc.url, texts, 20);
    const idle = await latencies(svc.url, texts, o.requests);
    const res = await fetch(`${svc.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ k: o.k }),
    });
    const { id } = jobSchema.pick({ id: true }).parse(await res.json());
    await new Promise((r) => setTimeout(r, 1000));
    const busy = await latencies(svc.url, texts, o.requests);
    const job = jobSchema.parse(await (await fetch(`${svc.url}/v1/jobs/${id}`)).json());
    await fetch(`${svc.url}/v1/jobs/${id}`, { method: 'DELETE' });
    return {
      search_ms_idle: { p50: pct(idle, 50), p99: pct(idle, 99) },
      search_ms_with_job: {
        p50: pct(busy, 50),
        p99: pct(busy, 99),
        job: `${job.state} ${job.processed}/${job.total}`,
      },
    };
  } finally {
    await svc.stop();
  }
}
