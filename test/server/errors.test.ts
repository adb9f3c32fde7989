import t from 'tap';
import { ParamineError } from '../../src/errors.js';

t.test('errors carry a stable code, an HTTP status and the offending field', async (t) => {
  const e = new ParamineError('BAD_INPUT', 'k must be >= 1', { field: 'k' });
  t.equal(e.code, 'BAD_INPUT');
  t.equal(e.status, 400);
  t.same(e.toJSON(), { code: 'BAD_INPUT', message: 'k must be >= 1', field: 'k' });
  t.equal(new ParamineError('NOT_FOUND', 'x').status, 404);
  t.same(new ParamineError('INTERNAL', 'x').toJSON(), { code: 'INTERNAL', message: 'x' });
});
