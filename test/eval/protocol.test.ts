// The batch format between the main thread and an eval worker (src/eval/protocol.ts).
import t from 'tap';
import { kRouteFlag, kRouteProject, newDecodedRequests, readRequests, RequestWriter, ResultReader, ResultWriter } from '../../src/eval/protocol.js';

t.test('requests round-trip: routes, ids, raw queries (UTF-8, empty), growing past the first buffer', async (t) => {
  const writer = new RequestWriter(new ArrayBuffer(32));
  const sent: [0 | 1, string, string][] = [
    [kRouteFlag, 'flg_a', 'targetingKey=u1&cohort=x'],
    [kRouteProject, 'prj_b', ''],
    [kRouteFlag, 'flg_ü', 'city=München&emoji=🚀'],
    [kRouteFlag, 'flg_long', `k=${'x'.repeat(10_000)}`],
  ];
  for (const [route, id, query] of sent) writer.add(route, id, query);
  t.equal(writer.count, 4);
  t.ok(writer.buffer.byteLength > 10_000);
  const decoded = readRequests(writer.buffer, writer.count, newDecodedRequests());
  t.same(sent.map((_, i) => [decoded.routes[i], decoded.ids[i], decoded.queries[i]]), sent);
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

t.test('finish() refuses a batch with unanswered requests', async (t) => {
  const out = new ResultWriter(new ArrayBuffer(64), 2);
  out.put(200, Buffer.from('{}'));
  t.throws(() => out.finish(), /answered 1 of 2/);
});
