/**
 * Closed-loop clients that honour Retry-After: each sends a search, and on a 503 waits the seconds the
 * service asks (with up to 20% jitter, as a polite client spreads its retries) before the next one. The
 * overload lab's second client population beside autocannon's impatient one, which retries at once.
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface PatientResult {
  durationS: number;
  errors: number;
  byStatus: Map<number, number[]>;
}

function post(url: URL, agent: Agent, body: string) {
  return new Promise<{ status: number; retryAfter: number }>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 0) || 0 }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function patientLoad(
  base: string,
  bodies: readonly string[],
  clients: number,
  duration: number,
): Promise<PatientResult> {
  const url = new URL('/v1/search', base);
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const byStatus = new Map<number, number[]>();
  const end = performance.now() + duration * 1000;
  let next = 0;
  let errors = 0;
  const client = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      try {
        const r = await post(url, agent, bodies[next++ % bodies.length] as string);
        const l = byStatus.get(r.status) ?? [];
        l.push(performance.now() - started);
        byStatus.set(r.status, l);
        if (r.status === 503 && r.retryAfter > 0) {
          await sleep(Math.min(end - performance.now(), r.retryAfter * 1000 * (1 + 0.2 * Math.random())));
        }
      } catch {
        errors++;
        await sleep(100);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, client));
  agent.destroy();
  return { durationS: (performance.now() - t0) / 1000, errors, byStatus };
}
