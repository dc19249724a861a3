// The entity tags of answers (src/http/entity-tags.ts). A tag is what a client sends back in If-None-Match,
// to any node of a cluster and across an upgrade: the same configuration and bytes must give the same tag
// on every build, or every client's next request is a 200 where a 304 would do.
import t from 'tap';
import { etag } from '../../src/http/entity-tags.js';
import { murmur3x86_32, murmur3x86_32Pair } from '../../src/bytes/murmur3.js';
import { random } from '../helpers/seeded-random.js';

/** Tags made by the build before the tag was written byte by byte (main at 0d13d65f), for these inputs. */
const kEarlierTags: [configTag: string, body: string, tag: string][] = [
  ['ab12cd34', '', '"ab12cd34-00000000ebb6c228"'],
  ['ab12cd34', '{"context":{"targetingKey":"user-1"}}', '"ab12cd34-e8f6feee3ea1d844"'],
  ['snapshot', 'x', '"snapshot-3e9a9b1bb2fd73f3"'],
  ['früh', 'abc', '"früh-b3dd93fac84a62dd"'],
  ['req_1.v2', 'ünïcødé ✓', '"req_1.v2-94ef05c78e156838"'],
];

t.test('the tags an earlier build made, unchanged', async (t) => {
  for (const [configTag, body, tag] of kEarlierTags) {
    t.equal(etag(configTag, Buffer.from(body)).toString(), tag, `${configTag} / ${JSON.stringify(body)}`);
  }
});

t.test('a tag is the configuration tag and both hashes as 8 hex digits each, for any bytes', async (t) => {
  const next = random(57);
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  let differ = 0;
  for (let i = 0; i < 2000; i++) {
    const body = Buffer.alloc(Math.floor(next() * 300));
    for (let j = 0; j < body.length; j++) body[j] = Math.floor(next() * 256);
    // Configuration tags as the engine makes them (8 hex digits) and others, one of them not ASCII.
    const configTag = i % 3 === 0 ? hex(Math.floor(next() * 2 ** 32)) : i % 3 === 1 ? `req_${i}.v${i % 7}` : `é${i}`;
    const expected = `"${configTag}-${hex(murmur3x86_32(body, body.length, 0))}${hex(murmur3x86_32(body, body.length, 0x9747b28c))}"`;
    if (etag(configTag, body).toString() !== expected) differ++;
  }
  t.equal(differ, 0, 'every tag as the formula writes it');
});

t.test('both hashes in one pass are the two passes, at any offset and length', async (t) => {
  const next = random(58);
  // One pool, so that bodies start at every offset modulo 4 of its buffer (the pass reads whole words).
  const pool = Buffer.alloc(100_004);
  for (let j = 0; j < pool.length; j++) pool[j] = Math.floor(next() * 256);
  const into = new Uint32Array(2);
  let differ = 0;
  let checked = 0;
  // Every tail length at every offset, then random lengths up to a large front-end answer's (tens of KB).
  const lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33];
  for (let i = 0; i < 400; i++) lengths.push(Math.floor(next() * (i < 300 ? 2_000 : 100_000)));
  for (const length of lengths) {
    for (let offset = 0; offset < 4; offset++) {
      const body = pool.subarray(offset, offset + length);
      const seeds = checked % 2 === 0 ? [0, 0x9747b28c] : [Math.floor(next() * 2 ** 32), Math.floor(next() * 2 ** 32)];
      murmur3x86_32Pair(body, seeds[0]!, seeds[1]!, into);
      if (into[0] !== murmur3x86_32(body, length, seeds[0]) || into[1] !== murmur3x86_32(body, length, seeds[1])) differ++;
      checked++;
    }
  }
  t.equal(checked, lengths.length * 4);
  t.equal(differ, 0, 'every pair as two passes give it');
  // A tag of a body inside a larger buffer is the tag of the same bytes alone.
  const inside = pool.subarray(3, 30_003);
  t.equal(etag('ab12cd34', inside).toString(), etag('ab12cd34', Buffer.from(inside)).toString());
});
