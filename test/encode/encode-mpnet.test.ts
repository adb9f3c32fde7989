/**
 * all-mpnet-base-v2 as `paramine models fetch mpnet` installs it (paramine-train convert's ONNX export):
 * our Encoder's vectors against sentence-transformers' own for the same sentences
 * (test/fixtures/mpnet-reference.json, from `paramine-train convert mpnet-fixture`): cosine >= 0.999 each, 768-d,
 * mean pooling read from the model's 1_Pooling/config.json, and the install record verifies. Skipped, with
 * the command to run, when the model is not fetched (it is opt-in: 0.9 GB).
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { z } from 'zod';
import { Encoder } from '../../src/encode/index.js';
import { convertedEntry } from '../../src/models/converted.js';
import { verifyConvertedDir } from '../../src/models/fetch-converted.js';

const MODEL = 'models/all-mpnet-base-v2';
const Fixture = z.object({
  dim: z.number(),
  items: z.array(z.object({ text: z.string(), embedding: z.array(z.number()) })).min(5),
});
const ref = Fixture.parse(JSON.parse(readFileSync('test/fixtures/mpnet-reference.json', 'utf8')));
const fetched = existsSync(`${MODEL}/model.onnx`);

t.test(
  'all-mpnet-base-v2: our vectors match sentence-transformers (cosine >= 0.999)',
  {
    skip: !fetched && `${MODEL} is not fetched: node dist/cli.js models fetch mpnet (needs the Python venv)`,
  },
  async (t) => {
    const enc = await Encoder.open(MODEL, { batchSize: 4 });
    t.teardown(() => enc.close());
    t.equal(enc.dim, 768);
    t.equal(ref.dim, 768);
    t.equal(enc.modelId, 'all-mpnet-base-v2');
    t.equal(enc.maxLength, 384, "sentence_bert_config.json's max_seq_length");
    const v = await enc.encode(ref.items.map((x) => x.text));
    ref.items.forEach((item, i) => {
      let c = 0;
      let n = 0;
      for (let k = 0; k < 768; k++) {
        c += (v[i * 768 + k] as number) * (item.embedding[k] as number);
        n += (item.embedding[k] as number) ** 2;
      }
      t.ok(c / Math.sqrt(n) >= 0.999, `${item.text.slice(0, 40)}: cosine ${(c / Math.sqrt(n)).toFixed(6)}`);
    });
    // Different sentences must not come out alike (a broken pooling can make every vector the same).
    let cross = 0;
    for (let k = 0; k < 768; k++) cross += (v[k] as number) * (v[768 + k] as number);
    t.ok(cross < 0.9, `two different sentences: cosine ${cross.toFixed(3)}`);
    const entry = convertedEntry('mpnet');
    t.ok(entry && (await verifyConvertedDir(entry, MODEL)), 'the install record verifies');
  },
);
