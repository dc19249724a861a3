// A streamed answer (src/http/streamed-body.ts) against a response that reports backpressure as uWS
// does: the next chunk is asked for only once the socket drained, so a client that does not read holds
// the server to one chunk; a client that goes away closes the chunks' generator (its finally runs); a
// failure before the first chunk writes nothing, one after it is told as such.
import t from 'tap';
import type { PendingResponse } from '../../src/http/http.js';
import { StreamFailed, sendStreamed } from '../../src/http/streamed-body.js';

/** A response whose socket takes one write and then waits until `drain()`. */
function fakeResponse() {
  const written: string[] = [];
  let writable: (() => boolean) | null = null;
  let ended = false;
  const res = {
    tracked: true,
    aborted: false,
    cork: (fn: () => void) => fn(),
    writeStatus: (status: string) => written.push(`status ${status}`),
    writeHeader: (name: string, value: string) => written.push(`${name}: ${value}`),
    write: (chunk: Uint8Array) => {
      written.push(Buffer.from(chunk).toString());
      return false;
    },
    onWritable: (fn: () => boolean) => {
      writable = fn;
    },
    end: () => {
      ended = true;
    },
  };
  return {
    res: res as unknown as PendingResponse,
    written,
    drain: () => {
      const fn = writable;
      writable = null;
      fn?.();
    },
    waiting: () => writable !== null,
    ended: () => ended,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('the next chunk is asked for only once the socket drained', async (t) => {
  const fake = fakeResponse();
  let pulled = 0;
  async function* chunks() {
    for (let i = 0; i < 3; i++) {
      pulled++;
      yield Buffer.from(`chunk ${i}`);
    }
  }
  const sent = sendStreamed(fake.res, 200, 'application/jsonl', [['X-Test', '1']], chunks());
  for (let i = 0; i < 5; i++) await tick();
  t.equal(pulled, 1, 'one chunk pulled while the socket is full');
  t.ok(fake.waiting(), 'waiting for the socket');
  t.strictSame(fake.written, [
    'status 200 OK',
    'Access-Control-Allow-Origin: *',
    'X-Content-Type-Options: nosniff',
    'Content-Type: application/jsonl',
    'X-Test: 1',
    'chunk 0',
  ]);
  for (let i = 1; i < 3; i++) {
    fake.drain();
    for (let j = 0; j < 5; j++) await tick();
    t.equal(pulled, i + 1, `chunk ${i} pulled once drained`);
  }
  fake.drain();
  await sent;
  t.ok(fake.ended(), 'ended once every chunk went');
});

t.test('a client gone: the generator is closed, its finally run', async (t) => {
  const fake = fakeResponse();
  let closed = false;
  async function* chunks() {
    try {
      for (;;) yield Buffer.from('x');
    } finally {
      closed = true;
    }
  }
  const sent = sendStreamed(fake.res, 200, 'application/jsonl', [], chunks());
  await tick();
  (fake.res as { aborted?: boolean }).aborted = true;
  await sent;
  t.ok(closed, 'the generator was closed');
  t.notOk(fake.ended(), 'nothing more written');
});

t.test('a failure before the first chunk writes nothing; after it, says the status was sent', async (t) => {
  const before = fakeResponse();
  // biome-ignore lint/correctness/useYield: a generator that fails before its first chunk
  async function* failing(): AsyncGenerator<Uint8Array> {
    throw new Error('no scratch space');
  }
  const early = await sendStreamed(before.res, 200, 'x', [], failing()).catch((err: unknown) => err);
  t.ok(early instanceof StreamFailed && !early.headersSent, 'before: the headers not sent');
  t.strictSame(before.written, [], 'nothing written: the caller answers in the envelope');
  const after = fakeResponse();
  async function* late() {
    yield Buffer.from('a');
    throw new Error('gone');
  }
  const sending = sendStreamed(after.res, 200, 'x', [], late()).catch((err: unknown) => err);
  await tick();
  after.drain();
  const failed = await sending;
  t.ok(failed instanceof StreamFailed && failed.headersSent, 'after: the headers were sent');
});

t.test('a client that reads as fast as chunks come: the thread runs other work between chunks', async (t) => {
  const fake = fakeResponse();
  const res = { ...(fake.res as object), write: () => true } as unknown as PendingResponse;
  let pulled = 0;
  async function* chunks() {
    // Chunks that need no I/O, as a page of raw events read from the store.
    for (let i = 0; i < 100; i++) {
      pulled++;
      yield Buffer.from(`chunk ${i}`);
    }
  }
  let pulledWhenOtherWorkRan = -1;
  setImmediate(() => {
    pulledWhenOtherWorkRan = pulled;
  });
  await sendStreamed(res, 200, 'application/jsonl', [], chunks());
  t.equal(pulled, 100, 'every chunk sent');
  t.ok(pulledWhenOtherWorkRan >= 0 && pulledWhenOtherWorkRan < 5, `other work ran after ${pulledWhenOtherWorkRan} chunks, not after all`);
});
