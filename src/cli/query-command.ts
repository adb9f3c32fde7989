/** `paramine query TEXT`: asks a running service and prints the labeled candidates as a table. */
import type { Command } from 'commander';
import { z } from 'zod';
import { defaultOf } from '../config.js';
import { ParamineError } from '../errors.js';
import { type SearchResponse, searchOptionsSchema } from '../search/types.js';
import { SERVE_SETTINGS } from './serve-command.js';

const optionsSchema = z.object({
  url: z.url(),
  k: z.coerce.number().int().min(1).max(100),
  rerank: z.boolean(),
  apiKey: z.string().optional(),
  json: z.boolean().default(false),
});

export function register(program: Command): void {
  program
    .command('query')
    .description('ask a running paramine service for paraphrases of TEXT and print them')
    .argument('<text...>', 'the sentence')
    .option(
      '--url <url>',
      'service address',
      `http://${SERVE_SETTINGS.host.default}:${SERVE_SETTINGS.port.default}`,
    )
    .option('--k <n>', 'candidates to show', String(defaultOf(searchOptionsSchema.shape.k)))
    .option('--no-rerank', 'skip the cross-encoder')
    .option('--api-key <key>', 'Bearer key, when the service wants one')
    .option('--json', 'print the raw JSON response')
    .action(async (words: string[], raw: unknown) => {
      const o = optionsSchema.parse(raw);
      const text = words.join(' ');
      let res: Response;
      try {
        res = await fetch(new URL('/v1/search', o.url), {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
          },
          body: JSON.stringify({ text, k: o.k, rerank: o.rerank }),
        });
      } catch (e) {
        throw new ParamineError('UNAVAILABLE', `cannot reach ${o.url}: ${(e as Error).message}`);
      }
      const body = (await res.json()) as SearchResponse & { code?: string; message?: string };
      if (!res.ok) throw new ParamineError('BAD_INPUT', `${res.status} ${body.code}: ${body.message}`);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        return;
      }
      process.stdout.write(formatResults(body));
    });
}

export function formatResults(body: SearchResponse): string {
  const lines: string[] = [];
  for (const r of body.results) {
    lines.push(`query: ${r.query}`, '');
    // p is the probability of the row's own label (a not_paraphrase row's p is how sure the model is of that).
    lines.push(' rank  ann  cosine  label            p(label) text');
    for (const [i, c] of r.candidates.entries()) {
      const p =
        c.label !== undefined && c.probabilities ? (c.probabilities[c.label] ?? 0).toFixed(3) : '  -  ';
      lines.push(
        `${String(i + 1).padStart(5)} ${String(c.annRank).padStart(4)}  ${c.cosine.toFixed(3)}  ${(c.label ?? '-').padEnd(15)} ${p.padEnd(8)} ${c.text}`,
      );
    }
    if (r.candidates.length === 0) lines.push('  (no candidates passed the filters)');
    const by = new Map<string, number>();
    for (const c of r.candidates) if (c.labeledBy) by.set(c.labeledBy, (by.get(c.labeledBy) ?? 0) + 1);
    if (by.size > 0) lines.push('', `labeled by: ${[...by].map(([m, n]) => `${m} (${n})`).join(', ')}`);
    lines.push('');
  }
  const t = body.timings;
  lines.push(
    `timings: encode ${t.encodeMs.toFixed(1)} ms, search ${t.searchMs.toFixed(1)} ms, rerank ${t.rerankMs.toFixed(1)} ms, total ${t.totalMs.toFixed(1)} ms`,
  );
  return `${lines.join('\n')}\n`;
}
