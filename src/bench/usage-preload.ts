/**
 * Preloaded into a benchmark's child process (`node --import`): when the process exits it writes its own
 * resource usage, peak RSS included, as JSON to the file PARAMINE_USAGE_FILE names. The peak is the
 * kernel's (getrusage), not a sample, and it is that of the process that did the work.
 */
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { env } from '../env.js';

const file = env('PARAMINE_USAGE_FILE');
if (file && isMainThread) {
  process.on('exit', (code) => {
    const u = process.resourceUsage();
    const usage = {
      exit_code: code,
      max_rss_bytes: u.maxRSS * 1024,
      user_cpu_s: u.userCPUTime / 1e6,
      system_cpu_s: u.systemCPUTime / 1e6,
    };
    writeFileSync(file, `${JSON.stringify(usage)}\n`);
  });
}
