// The bucket of a flag made with "bucketing": "fractional" (issue 44; design §2): flagd's fractional point
// over design §2's hash, floor(murmur3_x86_32(utf8(flagId + ":" + key), 0) * 100 / 2^32), against the
// vectors of the shipped fixture (computed by test/fixtures/bucket-vectors.py, in Python integers) and
// the ones design §2 and api.md print.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { bucketPrefix } from '../../../src/bytes/bucket-hash.js';
import { bucket, bucketAt, fractionalBucket } from '../../../src/evaluation/engine/bucket.js';
import { murmur3String } from '../../../src/bytes/murmur3.js';

interface Fixture {
  vectors: { flagId: string; key: string; murmur3: number; bucket: number; fractional: number }[];
}
const fixture = JSON.parse(readFileSync(new URL('../../../../test/fixtures/bucket-vectors.json', import.meta.url), 'utf8')) as Fixture;

t.test('fixture: every flagId:key vector has its fractional bucket, bit-exact', async (t) => {
  t.ok(fixture.vectors.length >= 20);
  for (const v of fixture.vectors) {
    const what = JSON.stringify(`${v.flagId}:${v.key}`);
    t.equal(fractionalBucket(v.flagId, v.key), v.fractional, `fractional ${what}`);
    // The formula in exact integers, from the fixture's hash: the fixture cannot drift from it.
    t.equal(v.fractional, Number((BigInt(v.murmur3) * 100n) >> 32n), `floor(h * 100 / 2^32) ${what}`);
    t.equal(bucketAt(true, bucketPrefix(v.flagId), v.key), v.fractional);
    t.equal(bucketAt(false, bucketPrefix(v.flagId), v.key), v.bucket, 'modulo stays design §2');
  }
  t.ok(
    fixture.vectors.some((v) => v.fractional !== v.bucket),
    'the two functions differ (so a flag keeps the one it was made with)',
  );
});

t.test('the vectors design §2 and api.md print', async (t) => {
  const printed: [string, string, number, number, number][] = [
    ['new-checkout', 'user-1', 2230340631, 31, 51],
    ['new-checkout', 'bob+tag@example.com', 1018149383, 83, 23],
    ['flg_CuLMI2m12El9ZzoZ', 'abc', 2968117410, 10, 69],
    ['dark-mode', 'München', 3247128561, 61, 75],
    ['dark-mode', '🚀', 1291639551, 51, 30],
    ['', '', 723937430, 30, 16],
  ];
  for (const [flagId, key, hash, modulo, fractional] of printed) {
    t.equal(murmur3String(`${flagId}:${key}`), hash);
    t.same([bucket(flagId, key), fractionalBucket(flagId, key)], [modulo, fractional], `${flagId}:${key}`);
  }
});

t.test('fractional buckets are 0..99 and spread evenly', async (t) => {
  const counts = new Array<number>(100).fill(0);
  for (let i = 0; i < 100_000; i++) {
    const b = fractionalBucket('flg_spread', `user-${i}`);
    if (!Number.isInteger(b) || b < 0 || b > 99) t.fail(`bucket ${b} of user-${i}`);
    counts[b]!++;
  }
  // 1,000 expected per bucket; 5 standard deviations (about 160) either side.
  t.ok(Math.min(...counts) > 840 && Math.max(...counts) < 1160, `counts between ${Math.min(...counts)} and ${Math.max(...counts)}`);
});
