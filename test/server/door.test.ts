/**
 * Refused at the door, with a message that names the fix, and accepted where clients are only sloppy: an
 * empty-bodied DELETE carrying `content-type: application/json` (many clients set it on every request), a
 * sentence id that is no integer, a "sentence" of punctuation alone.
 */
import t from 'tap';
import { startTestService } from '../helpers/service.js';

const s = await startTestService(30, false);
t.teardown(() => s.close());
const app = s.app();

t.test('an empty-bodied DELETE with a JSON content type is accepted', async (t) => {
  const added = await app.inject({
    method: 'POST',
    url: '/v1/sentences',
    payload: { sentences: [{ text: 'A sentence to delete again.' }] },
  });
  const id = added.json().sentences[0].id as number;
  const res = await app.inject({
    method: 'DELETE',
    url: `/v1/sentences/${id}`,
    headers: { 'content-type': 'application/json' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().deleted, true);
});

t.test('an id that is neither an index id nor one a user gave says what ids are', async (t) => {
  for (const id of ['abc', '1.5']) {
    const res = await app.inject({ method: 'GET', url: `/v1/sentences/${id}` });
    t.equal(res.statusCode, 404);
    t.match(res.json().message, /not an index id \(0, 1, 2, \.\.\.\) nor an id a record or a write gave/, id);
  }
});

t.test('punctuation alone is no sentence', async (t) => {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/sentences',
    payload: { sentences: [{ text: '...' }] },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json().message, /letter or a digit/);
});
