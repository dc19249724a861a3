// The batch format between the main thread and an eval worker (src/evaluation/engine/protocol.ts).
import t from 'tap';
import { DecodedRequests, RequestWriter, ResultReader, ResultWriter, type Route } from '../../../src/evaluation/engine/protocol.js';
import { routeNumbers } from '../../../src/all-routes.js';
import { kMaxSlotBytes } from '../../../src/evaluation/engine/batch-channel.js';
import { kEvaluationApiRoutes } from '../../../src/evaluation/engine/evaluation-api-routes.js';
import { kOfrepRoutes } from '../../../src/ofrep/routes.js';

const { evaluateFlag: kRouteFlag, evaluateProject: kRouteProject } = routeNumbers(kEvaluationApiRoutes);
const { ofrepFlag: kRouteOfrepFlag, ofrepBulk: kRouteOfrepBulk } = routeNumbers(kOfrepRoutes);

t.test('requests round-trip: routes, ids, raw queries (UTF-8, empty), growing past the first buffer', async (t) => {
  const writer = new RequestWriter(new ArrayBuffer(32));
  const sent: [Route, string, string][] = [
    [kRouteFlag, 'flg_a', 'targetingKey=u1&cohort=x'],
    [kRouteProject, 'prj_b', ''],
    [kRouteFlag, 'flg_ü', 'city=München&emoji=🚀'],
    [kRouteFlag, 'flg_long', `k=${'x'.repeat(10_000)}`],
  ];
  for (const [route, id, query] of sent) writer.add(route, id, query);
  t.equal(writer.count, 4);
  t.ok(writer.buffer.byteLength > 10_000);
  const decoded = new DecodedRequests().readRequests(writer.buffer, writer.count);
  t.same(
    sent.map((_, i) => [decoded.routes[i], decoded.ids[i], decoded.queries[i]]),
    sent,
  );
});

t.test('answers: put and open/push/close, read back in place; the buffer grows when needed', async (t) => {
  const out = new ResultWriter(new ArrayBuffer(8), 3);
  out.put(200, Buffer.from('{"a":1}'));
  out.open();
  out.pushByte(0x5b);
  out.push(Buffer.from('x'.repeat(5000)));
  out.pushByte(0x5d);
  out.close(200);
  out.put(404, Buffer.from(''));
  const reader = new ResultReader(out.finish());
  t.equal(reader.count, 3);
  t.same([reader.status(0), reader.bodyText(0)], [200, '{"a":1}']);
  t.same([reader.status(1), reader.bodyText(1)], [200, `[${'x'.repeat(5000)}]`]);
  t.same([reader.status(2), reader.body(2).length], [404, 0]);
});

t.test('answers putting the same body share its bytes and one view; the last answer ends the bytes', async (t) => {
  const on = Buffer.from('{"enabled":true}');
  const off = Buffer.from('{"enabled":false}');
  const out = new ResultWriter(new ArrayBuffer(8), 6);
  out.put(200, on);
  out.put(200, on);
  out.put(200, off);
  out.put(403, off);
  out.open();
  out.push(Buffer.from('[1]'));
  out.close(200);
  out.put(200, on);
  const reader = new ResultReader(out.finish());
  t.same(
    Array.from({ length: 6 }, (_, i) => [reader.status(i), reader.bodyText(i)]),
    [
      [200, '{"enabled":true}'],
      [200, '{"enabled":true}'],
      [200, '{"enabled":false}'],
      [403, '{"enabled":false}'],
      [200, '[1]'],
      [200, '{"enabled":true}'],
    ],
  );
  // Copied once each (the last answer again, at the end): 12 + 6 × 12 header bytes, then the bodies,
  // each at most 7 bytes past where the one before it ended (placed to copy a word at a time).
  const last = reader.body(5);
  t.equal(reader.bytesUsed, last.byteOffset + last.length, 'bytesUsed is where the last answer ends');
  const packed = 12 + 6 * 12 + on.length + off.length + 3 + on.length;
  t.ok(reader.bytesUsed >= packed && reader.bytesUsed <= packed + 4 * 7, `${reader.bytesUsed} bytes for ${packed} packed`);
  const first = reader.body(0);
  t.equal(reader.body(1), first, "the second answer reads through the first one's view");
  t.not(reader.body(2), first);
  t.equal(reader.body(3), reader.body(2));
});

t.test('bodies in a shared slot: each placed to copy a word at a time; an assembled body past 64 KB reads back whole', async (t) => {
  // A slot is a SharedArrayBuffer, which V8 fills a byte at a time unless the copy's source and
  // destination sit alike against 8-byte words (ResultWriter's assembly).
  const slot = new SharedArrayBuffer(64);
  const pool = Buffer.from('..{"a":1}{"bb":22}');
  const odd = pool.subarray(2, 9);
  const odder = pool.subarray(9);
  const pieces = Array.from({ length: 2000 }, (_, i) => Buffer.from(`{"key":"flag-${i}","value":${i % 3 === 0}},`));
  const out = new ResultWriter(slot, 4);
  out.put(200, odd);
  out.open();
  for (const piece of pieces) out.push(piece);
  out.pushByte(0x5d);
  out.close(200);
  out.put(200, odder);
  out.open();
  out.push(Buffer.from('[2]'));
  out.close(404);
  const answered = out.finish();
  t.ok(answered instanceof SharedArrayBuffer, 'grown as the batch channel grows a slot: shared');
  const reader = new ResultReader(answered);
  const assembled = `${pieces.join('')}]`;
  t.ok(assembled.length > 64 * 1024);
  t.same(
    Array.from({ length: 4 }, (_, i) => [reader.status(i), reader.bodyText(i)]),
    [
      [200, '{"a":1}'],
      [200, assembled],
      [200, '{"bb":22}'],
      [404, '[2]'],
    ],
  );
  t.equal(reader.body(0).byteOffset % 8, odd.byteOffset % 8, 'a put body sits against words as its source does');
  t.equal(reader.body(2).byteOffset % 8, odder.byteOffset % 8);
  t.equal(reader.body(1).byteOffset % 8, 0, 'an assembled body starts on a word');
  t.equal(reader.body(3).byteOffset % 8, 0);
  // The next batch is written over the same grown buffer, which still holds this one (its four answers'
  // header and the large body): the reader sees only the new batch, its header and its one body.
  const next = new ResultWriter(answered, 1, 7);
  next.open();
  next.push(Buffer.from('{}'));
  next.close(200);
  const again = new ResultReader(next.finish());
  t.same(
    { count: again.count, revision: again.revision, status: again.status(0), body: again.bodyText(0), tag: again.tag(0).length },
    { count: 1, revision: 7, status: 200, body: '{}', tag: 0 },
    'the next batch reads as itself',
  );
  t.ok(again.bytesUsed < 64, `nothing of the large body is counted in the next batch (${again.bytesUsed} bytes used)`);
});

t.test('a body assembled past kMaxSlotBytes reads back whole, and so do the smaller ones after it', async (t) => {
  const piece = Buffer.from('0123456789abcdef'.repeat(4096));
  /** `count` pieces as one assembled body, then `{"after":true}`, read back. */
  const assemble = (count: number) => {
    const out = new ResultWriter(new SharedArrayBuffer(64), 2);
    out.open();
    for (let i = 0; i < count; i++) out.push(piece);
    out.close(200);
    out.put(200, Buffer.from('{"after":true}'));
    const answered = out.finish();
    const reader = new ResultReader(answered);
    const whole = Buffer.from(reader.body(0)).equals(Buffer.concat(Array.from({ length: count }, () => piece)));
    return { shared: answered instanceof SharedArrayBuffer, whole, after: reader.bodyText(1) };
  };
  const large = Math.ceil((kMaxSlotBytes + 1) / piece.length);
  t.same(
    assemble(large),
    { shared: false, whole: true, after: '{"after":true}' },
    'past kMaxSlotBytes: a buffer of its own, every byte as pushed',
  );
  t.same(assemble(20), { shared: true, whole: true, after: '{"after":true}' }, 'the next batch assembles afresh');
});

t.test('finish() refuses a batch with unanswered requests', async (t) => {
  const out = new ResultWriter(new ArrayBuffer(64), 2);
  out.put(200, Buffer.from('{}'));
  t.throws(() => out.finish(), /answered 1 of 2/);
});

t.test('OFREP requests: bytes in the query slot and an extra string round-trip beside plain ones', async (t) => {
  const writer = new RequestWriter(new ArrayBuffer(16));
  writer.add(kRouteFlag, 'flg_a', 'x=1');
  writer.add(kRouteOfrepFlag, 'flg_b', Buffer.from('{"context":{"city":"München"}}'), 'prj_1');
  writer.add(kRouteOfrepBulk, 'prj_2', new Uint8Array(0), '"etag-1", W/"etag-2"');
  const decoded = new DecodedRequests().readRequests(writer.buffer, writer.count);
  t.same(decoded.routes.slice(0, 3), [kRouteFlag, kRouteOfrepFlag, kRouteOfrepBulk]);
  t.same(decoded.queries.slice(0, 3), ['x=1', '{"context":{"city":"München"}}', '']);
  t.same(decoded.extras.slice(0, 3), ['', 'prj_1', '"etag-1", W/"etag-2"']);
});

t.test('answers with an ETag: status in the low bits, the tag after the body; rewind drops a hashed body', async (t) => {
  const out = new ResultWriter(new ArrayBuffer(8), 3);
  out.put(200, Buffer.from('{"a":1}'));
  out.open();
  out.push(Buffer.from('{"flags":[]}'));
  t.equal(out.openBody().toString(), '{"flags":[]}');
  out.push(Buffer.from('"tag-1"'));
  out.close(200, 7);
  out.open();
  out.push(Buffer.from('{"flags":[]}'));
  out.rewind();
  out.push(Buffer.from('"tag-2"'));
  out.close(304, 7);
  const reader = new ResultReader(out.finish());
  t.same([reader.word(0), reader.status(0), reader.bodyText(0), reader.tag(0).length], [200, 200, '{"a":1}', 0]);
  t.same([reader.word(1) > 0xffff, reader.status(1), reader.bodyText(1), reader.tagText(1)], [true, 200, '{"flags":[]}', '"tag-1"']);
  t.same([reader.status(2), reader.bodyText(2), reader.tagText(2)], [304, '', '"tag-2"']);
});

t.test('ids: one decoding reused across requests and batches reads every id right (same length, other bytes; long; UTF-8)', async (t) => {
  const decoded = new DecodedRequests();
  const long = `flg_${'x'.repeat(200)}`;
  const batches = [
    ['flg_aaaa', 'flg_aaaa', 'flg_aaab', 'flg_aaaa', 'prj_aaaa', long, long, 'flg_ü', 'flg_ü'],
    ['flg_ü', 'flg_aaaa', 'flg_aaab', 'flg_aaab', `${long}y`, long, 'flg_aaaa'],
  ];
  for (const ids of batches) {
    const writer = new RequestWriter(new ArrayBuffer(64));
    for (const id of ids) writer.add(kRouteFlag, id, `k=${id}`);
    decoded.readRequests(writer.buffer, writer.count);
    t.same(decoded.ids.slice(0, ids.length), ids);
    t.same(
      decoded.queries.slice(0, ids.length),
      ids.map((id) => `k=${id}`),
    );
  }
});

t.test('request lengths past 16 bits read back (a large body in the query slot)', async (t) => {
  const body = Buffer.alloc(70_000, 0x61);
  const writer = new RequestWriter(new ArrayBuffer(16));
  writer.add(kRouteOfrepFlag, 'flg_a', body, 'prj_1');
  writer.add(kRouteFlag, 'flg_b', 'x=1');
  const decoded = new DecodedRequests().readRequests(writer.buffer, writer.count);
  t.equal(decoded.queries[0], body.toString());
  t.same([decoded.ids[1], decoded.queries[1], decoded.extras[0]], ['flg_b', 'x=1', 'prj_1']);
});

t.test('one buffer reused for the next batch: an id of the same length with other bytes is read anew', async (t) => {
  const decoded = new DecodedRequests();
  const buffer = new SharedArrayBuffer(256);
  for (const ids of [
    ['flg_aaaa', 'flg_aaaa'],
    ['flg_bbbb', 'flg_aaaa'],
    ['flg_aaaa', 'flg_bbbb'],
  ]) {
    const writer = new RequestWriter(buffer as unknown as ArrayBuffer);
    for (const id of ids) writer.add(kRouteFlag, id, '');
    t.equal(writer.buffer, buffer, 'no growth: the same bytes are overwritten');
    decoded.readRequests(buffer, ids.length);
    t.same(decoded.ids.slice(0, ids.length), ids);
  }
});

t.test('the integers are little-endian u32s, all 32 bits of them', async (t) => {
  const writer = new RequestWriter(new ArrayBuffer(64));
  writer.add(kRouteFlag, 'flg_a', 'x=12');
  const view = new DataView(writer.buffer);
  t.same([view.getUint8(0), view.getUint32(1, true), view.getUint32(5, true), view.getUint32(9, true)], [kRouteFlag, 5, 4, 0]);
  // A revision whose low word has its top bit set, and a high word: read back through the reader's own view.
  const revision = 3 * 2 ** 32 + 0xf1234567;
  const out = new ResultWriter(new ArrayBuffer(64), 1, revision);
  out.put(200, Buffer.from('{}'));
  const answers = out.finish();
  t.equal(new ResultReader(answers).revision, revision);
  t.same([new DataView(answers).getUint32(4, true), new DataView(answers).getUint32(8, true)], [0xf1234567, 3]);
});
