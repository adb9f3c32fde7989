/**
 * `paramine mine`'s flags as a job request: a flag not given leaves its field to the job schema (the
 * defaults of the CLI, the API and the page are one), `--spec` gives any field of POST /v1/jobs inline or
 * from a file, and the flags add to it (the filter field by field).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { specFromFlags } from '../../src/cli/mine-spec.js';
import { jobSpecSchema } from '../../src/jobs/index.js';

const base = { index: 'i', out: 'o.jsonl', resume: false, faissThreads: 1, quiet: true, append: false };

t.test('no flags: the job schema defaults, as the API takes an empty body', async (t) => {
  const { spec } = specFromFlags(base);
  t.same(jobSpecSchema.parse(spec), jobSpecSchema.parse({}));
});

t.test('--spec gives any field; flags add to it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-mine-spec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const request = {
    k: 7,
    docPairs: { align: { min: 0.3, partners: 2 } },
    filter: { bleuMax: 20, anyOf: [{ charNgramMax: 0.4 }, { plrMax: 1 }] },
    rerank: { minProbability: 0.6 },
  };
  const file = join(dir, 'job.json');
  writeFileSync(file, JSON.stringify(request));
  for (const given of [file, JSON.stringify(request)]) {
    const { spec } = specFromFlags({
      ...base,
      spec: given,
      minTokens: 5,
      rerank: true,
      labels: ['paraphrase'],
    });
    const parsed = jobSpecSchema.parse(spec);
    t.equal(parsed.k, 7, 'from the spec');
    t.match(parsed.docPairs, { align: { min: 0.3, partners: 2 } }, 'a field no flag has');
    t.same(parsed.filter, { bleuMax: 20, anyOf: request.filter.anyOf, minTokens: 5 }, 'filters merge');
    t.same(parsed.rerank, { minProbability: 0.6, labels: ['paraphrase'] }, 'rerank merges');
    t.equal(jobSpecSchema.parse(specFromFlags({ ...base, spec: given, k: 3 }).spec).k, 3, 'a flag wins');
  }
  t.throws(() => specFromFlags({ ...base, spec: '[1]' }), /--spec takes a job request as JSON/);
  t.throws(() => specFromFlags({ ...base, spec: join(dir, 'none.json') }), /--spec .*none\.json/);
});
