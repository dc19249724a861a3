// readsClock (src/targeting/reads-clock.ts): which rules may read `$flagd.timestamp`, so that the OFREP bulk
// ETag hashes their answers' bytes instead of naming the context.
import t from 'tap';
import { readsClock } from '../../src/targeting/reads-clock.js';

t.test('a var of $flagd.timestamp, $flagd or the whole context reads the clock; other names do not', async (t) => {
  t.ok(readsClock({ '>': [{ var: '$flagd.timestamp' }, 1] }));
  t.ok(readsClock({ '>': [{ var: ['$flagd.timestamp', 0] }, 1] }), 'with a default');
  t.ok(readsClock({ '!!': [{ var: '$flagd' }] }), 'the object holding it');
  t.ok(readsClock({ '!!': [{ var: '' }] }), 'the whole context holds $flagd');
  t.ok(readsClock({ if: [true, { cat: ['a', { var: '$flagd.timestamp' }] }, null] }), 'nested anywhere');
  t.ok(readsClock({ var: { cat: ['$flagd.', 'timestamp'] } }), 'a name that is not a literal: taken to read it');
  t.notOk(readsClock({ '==': [{ var: '$flagd.flagKey' }, 'x'] }), 'the flag key is fixed');
  t.notOk(readsClock({ '==': [{ var: '$flagd\\.timestamp' }, 'x'] }), 'an escaped dot names a context attribute');
  t.notOk(readsClock({ in: [{ var: 'email' }, ['a', 'b']] }));
  t.notOk(readsClock({ missing: ['$flagd.timestamp'] }), 'never missing, whatever the time');
  t.notOk(readsClock(null));
});

t.test('a shared sub-rule (a fragment) is walked once and answers for every rule that holds it', async (t) => {
  const fragment = { '>': [{ var: '$flagd.timestamp' }, 5] };
  t.ok(readsClock({ if: [fragment, 'a', 'b'] }));
  t.ok(readsClock({ and: [true, fragment] }));
  const plain = { '==': [{ var: 'plan' }, 'beta'] };
  t.notOk(readsClock({ if: [plain, 'a', 'b'] }));
  t.notOk(readsClock({ or: [plain, false] }));
});
