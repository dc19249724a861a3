// fractional's bucketing: the point arithmetic (exact without BigInt), the hash input, and the one
// deliberate difference from flagd-core: non-ASCII bucketing values are hashed as UTF-8, as flagd does.
import fc from 'fast-check';
import t from 'tap';
import { murmur3String } from '../../src/bytes/murmur3.js';
import { bucketPoint, fractional } from '../../src/targeting/fractional.js';
import { bothAnswers } from './flagd-core-oracle.js';

t.test('bucketPoint = floor(hash * total / 2^32), exactly, for every hash and total weight', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 2147483647 }), (hash, total) => {
      return BigInt(bucketPoint(hash, total)) === (BigInt(hash) * BigInt(total)) >> 32n;
    }),
    { numRuns: 20000 },
  );
  t.equal(bucketPoint(0xffffffff, 2147483647), 2147483646);
  t.equal(bucketPoint(0, 100), 0);
});

t.test('the bucketing value: flagKey + targetingKey without separator, or the first operand when a string', async (t) => {
  const buckets = [
    ['a', 50],
    ['b', 50],
  ];
  const point = (value: string) => bucketPoint(murmur3String(value), 100);
  t.equal(fractional(buckets, 'flag', 'user-1'), point('flaguser-1') < 50 ? 'a' : 'b');
  t.equal(fractional(['explicit', ...buckets], 'flag', 'user-1'), point('explicit') < 50 ? 'a' : 'b');
  t.equal(fractional(buckets, 'flag', ''), null, 'an empty targetingKey');
  t.equal(fractional(buckets, 'flag', undefined), null, 'no targetingKey');
  t.equal(fractional([['a', 0]], 'flag', 'u'), null, 'total weight 0');
  t.equal(
    fractional(
      [
        ['a', 2147483647],
        ['b', 1],
      ],
      'flag',
      'u',
    ),
    null,
    'total weight over 2^31 - 1',
  );
  t.equal(
    fractional(
      [
        ['a', -5],
        ['b', 1],
      ],
      'flag',
      'u',
    ),
    'b',
    'a negative weight counts as 0',
  );
  t.equal(fractional([{ a: 1 }], 'flag', 'u'), null, 'a bucket that is not an array');
});

t.test('ASCII keys: the same bucket as flagd-core; non-ASCII: UTF-8 as flagd hashes (flagd-core hashes UTF-16 code units)', async (t) => {
  const document = {
    flags: {
      headerColor: {
        state: 'ENABLED',
        variants: { a: 'A', b: 'B', c: 'C' },
        defaultVariant: 'a',
        targeting: { fractional: [['a'], ['b'], ['c']] },
      },
    },
  };
  for (const key of ['alice', 'bob@example.com', '1234', 'K-9']) {
    const { ours, theirs } = bothAnswers(document, 'headerColor', 'string', { targetingKey: key });
    t.same(ours, theirs, key);
  }
  // "Zoë": UTF-8 bytes 5a 6f c3 ab. The hash below is also what test/fixtures/bucket-vectors.py (an
  // independent implementation) gives for utf8("headerColorZoë"); flagd-core hashes the code unit 0xeb
  // as one byte instead, and lands in another bucket.
  t.equal(murmur3String('headerColorZoë'), 2527975021);
  const { ours, theirs } = bothAnswers(document, 'headerColor', 'string', { targetingKey: 'Zoë' });
  t.equal(ours.variant, 'b', 'bucket 1 of 3: floor(2527975021 * 3 / 2^32)');
  t.equal(theirs.variant, 'a', 'flagd-core: bucket 0');
});
