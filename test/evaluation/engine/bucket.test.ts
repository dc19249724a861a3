// design §2 bucketing: murmur3_x86_32 bit-exactness and bucket(flagId, key), against the shipped fixture.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import { murmur3String, murmur3x86_32 } from '../../../src/bytes/murmur3.js';

interface Fixture {
  strings: { input: string; seed: number; murmur3: number }[];
  vectors: { flagId: string; key: string; input: string; murmur3: number; bucket: number }[];
}
// test/fixtures/bucket-vectors.json is produced by test/fixtures/bucket-vectors.py, an independent
// Python implementation checked against published MurmurHash3 reference vectors (see that script).
const fixture = JSON.parse(readFileSync(new URL('../../../../test/fixtures/bucket-vectors.json', import.meta.url), 'utf8')) as Fixture;

t.test('murmur3_x86_32: the design vectors', async (t) => {
  t.equal(murmur3String('', 0), 0);
  t.equal(murmur3String('a', 0), 1009084850);
  t.equal(murmur3String('hello', 0), 613153351);
});

t.test('murmur3_x86_32: published reference vectors (seeds, zero bytes, every tail length)', async (t) => {
  t.equal(murmur3x86_32(new Uint8Array(0), 0, 1), 0x514e28b7);
  t.equal(murmur3x86_32(new Uint8Array(0), 0, 0xffffffff), 0x81f16f39);
  t.equal(murmur3x86_32(new Uint8Array(4), 4, 0), 0x2362f9de);
  t.equal(murmur3String('aaaa', 0x9747b28c), 0x5a97808a);
  for (const s of fixture.strings) t.equal(murmur3String(s.input, s.seed), s.murmur3, JSON.stringify(s.input));
});

t.test('fixture: at least 20 flagId:key vectors, each bit-exact', async (t) => {
  t.ok(fixture.vectors.length >= 20);
  for (const v of fixture.vectors) {
    t.equal(v.input, `${v.flagId}:${v.key}`);
    t.equal(murmur3String(v.input), v.murmur3, `murmur3 ${JSON.stringify(v.input)}`);
    t.equal(bucket(v.flagId, v.key), v.bucket, `bucket ${JSON.stringify(v.input)}`);
    t.equal(v.bucket, v.murmur3 % 100);
  }
});

t.test('hash is unsigned and bucket is an integer 0..99', async (t) => {
  let high = false;
  const bad: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const h = murmur3String(`flag:user-${i}`);
    if (h > 0x7fffffff) high = true;
    if (!(h >= 0 && h <= 0xffffffff && Number.isInteger(h))) bad.push(h);
    const b = bucket('flag', `user-${i}`);
    if (!(b >= 0 && b < 100 && Number.isInteger(b))) bad.push(b);
  }
  t.same(bad, []);
  t.ok(high, 'hashes above 2^31 stay positive (no int32 sign leak)');
});

t.test('bucket writes the bytes without concatenating, also for keys larger than the scratch buffer', async (t) => {
  const long = 'ü'.repeat(5000);
  t.equal(bucket('f', long), murmur3String(`f:${long}`) % 100);
  t.equal(bucket('f', 'short'), murmur3String('f:short') % 100, 'and short keys after the buffer grew');
});

t.test('buckets spread evenly enough for percentages to mean something', async (t) => {
  const counts = new Array<number>(10).fill(0);
  for (let i = 0; i < 10_000; i++) counts[Math.floor(bucket('flg_spread', `u${i}`) / 10)]!++;
  for (const c of counts) t.ok(c > 850 && c < 1150, `decile count ${c}`);
});

t.test('bucket() whatever it asked before: ids alternating under one key, keys changing, ids not ASCII or past the scratch', async (t) => {
  // bucket.ts keeps the last key and the last id in its scratch buffer: every order must hash the same bytes.
  const ids = ['flg_a', 'flg_bbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'flág-ü', '旗', 'x'.repeat(1500), 'flg_a', ''];
  const keys = ['user-1', 'user-1', 'ключ', 'k'.repeat(5000), '', 'user-2', 'user-1'];
  for (const key of keys) {
    for (const id of ids) t.equal(bucket(id, key), murmur3String(`${id}:${key}`) % 100, `${id.slice(0, 12)} / ${key.slice(0, 12)}`);
  }
});
