// One SSE connection's bounded buffer (src/stream/sse-connection.ts) against a fake uWS response that
// can refuse writes, as uWS does under backpressure.
import t from 'tap';
import { SseConnection, type SseResponse } from '../../src/stream/sse-connection.js';

function fakeRes(accept: () => boolean) {
  const written: string[] = [];
  let writable: (() => boolean) | null = null;
  let closed = 0;
  const res = {
    cork(fn: () => void) {
      fn();
      return res;
    },
    write(chunk: string) {
      written.push(chunk);
      return accept();
    },
    onWritable(fn: () => boolean) {
      writable = fn;
      return res;
    },
    close() {
      closed++;
      return res;
    },
    end() {
      return res;
    },
  };
  return { res: res as unknown as SseResponse, written, drain: () => writable!(), closed: () => closed };
}

t.test('flowing: every event is written at once', async (t) => {
  const f = fakeRes(() => true);
  const c = new SseConnection(f.res, { maxQueuedBytes: 100, maxStallMs: 1000, onDrop: () => t.fail('dropped') });
  c.send('a');
  c.send('b');
  t.same(f.written, ['a', 'b']);
});

t.test('backpressure: events wait (not written to uWS) until onWritable, then go as one chunk', async (t) => {
  let ok = false;
  const f = fakeRes(() => ok);
  const c = new SseConnection(f.res, { maxQueuedBytes: 100, maxStallMs: 1000, onDrop: () => t.fail('dropped') });
  c.send('first');
  c.send('second');
  c.send('third');
  t.same(f.written, ['first'], 'nothing more goes to uWS while it buffers');
  ok = true;
  t.equal(f.drain(), true);
  t.same(f.written, ['first', 'secondthird']);
  c.send('fourth');
  t.same(f.written.at(-1), 'fourth', 'flowing again');
});

t.test('a reader too far behind is dropped: closed once, onDrop once, nothing queued after', async (t) => {
  const f = fakeRes(() => false);
  let drops = 0;
  const c = new SseConnection(f.res, { maxQueuedBytes: 10, maxStallMs: 60_000, onDrop: () => drops++ });
  c.send('x');
  c.send('12345');
  c.send('67890');
  t.same([drops, f.closed(), c.isClosed], [0, 0, false], 'at the bound');
  c.send('!');
  t.same([drops, f.closed(), c.isClosed], [1, 1, true]);
  c.send('more');
  t.equal(f.written.length, 1);
  t.equal(drops, 1);
});

t.test('a reader stalled for longer than maxStallMs is dropped at the next heartbeat check', async (t) => {
  const f = fakeRes(() => false);
  let drops = 0;
  const c = new SseConnection(f.res, { maxQueuedBytes: 1000, maxStallMs: 50, onDrop: () => drops++ });
  c.send('x');
  c.checkStall(performance.now());
  t.equal(drops, 0);
  c.checkStall(performance.now() + 51);
  t.same([drops, f.closed()], [1, 1]);
});

t.test('after the client went away nothing is written', async (t) => {
  const f = fakeRes(() => true);
  const c = new SseConnection(f.res, { maxQueuedBytes: 10, maxStallMs: 50, onDrop: () => t.fail('dropped') });
  c.aborted();
  c.send('x');
  c.end();
  t.same(f.written, []);
});
