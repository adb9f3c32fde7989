/** What a benchmark's JSON says about the machine it ran on (on a shared machine, the load averages). */
import { cpus, loadavg } from 'node:os';

export function machineInfo(loadavgBefore: number[]) {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    loadavgBefore,
    loadavgAfter: loadavg(),
  };
}
