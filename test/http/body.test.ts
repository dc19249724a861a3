// The one refusal of a body that was not read (src/http/body.ts), as the Management API and the web console
// answer it; and a body read (in-process, uWS's chunks stood in for) kept and moved without needless copies.
import t from 'tap';
import { kErrors } from '../../src/errors.js';
import { BodyBudget, type BodyResult, bodyRefusal, keepBody } from '../../src/http/body.js';
import type { PendingResponse } from '../../src/http/http.js';
import { movableBuffers } from '../../src/model/request-body.js';

t.test('one wording per case, with the spec statuses', async (t) => {
  const tooLarge = bodyRefusal('tooLarge');
  t.equal(tooLarge.code, 'PAYLOAD_TOO_LARGE');
  t.equal(kErrors[tooLarge.code].status, 413);
  t.equal(tooLarge.detail, 'The request body is larger than 1048576 bytes (1 MiB); send a smaller body.');
  const busy = bodyRefusal('busy');
  t.equal(busy.code, 'SERVER_BUSY');
  t.equal(kErrors[busy.code].status, 503);
  t.match(busy.detail, /^The server is buffering as many request bodies as it allows; this body was not read and nothing was changed\./);
});

/** A response that hands `chunks` to the reader's onData, as uWS does (each chunk neutered after its callback). */
function fakeResponse(chunks: readonly Uint8Array[]) {
  const res = {
    aborted: false,
    tracked: false,
    abort: () => {},
    onAborted(handler: () => void) {
      res.abort = handler;
    },
    onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void) {
      chunks.forEach((bytes, i) => {
        const chunk = bytes.slice().buffer;
        handler(chunk, i === chunks.length - 1);
        structuredClone(chunk, { transfer: [chunk] }); // neutered, as uWS does
      });
    },
  };
  return res;
}

function readBody(chunks: readonly Uint8Array[]): {
  body: Buffer;
  release: () => void;
  budget: BodyBudget;
  res: ReturnType<typeof fakeResponse>;
} {
  const budget = BodyBudget.create(4 * 1024 * 1024);
  const res = fakeResponse(chunks);
  let result: BodyResult | null = null;
  const total = chunks.reduce((n, c) => n + c.byteLength, 0);
  budget.read(res as unknown as PendingResponse, String(total), (r) => {
    result = r;
  });
  const read = result as BodyResult | null;
  if (read === null || !read.ok) throw new Error('the body was not read');
  return { body: read.body, release: read.release, budget, res };
}

const bytesOf = (n: number, fill: number) => new Uint8Array(n).fill(fill);

t.test("keepBody: the request's own bytes, copied only where they are not already its own", async (t) => {
  const small = readBody([bytesOf(100, 1)]);
  t.ok(small.body.buffer.byteLength > 100, 'a small body is a view into the shared pool');
  const smallKept = keepBody(small.body);
  t.equal(smallKept.buffer.byteLength, 100, 'kept: an exact copy, its own buffer');
  t.same(movableBuffers({ bytes: smallKept, contentType: '' }), [], 'small: cloned, which costs less than moving');

  const large = readBody([bytesOf(64 * 1024, 2)]);
  const largeKept = keepBody(large.body);
  t.equal(largeKept.buffer, large.body.buffer, 'a large one-chunk body is taken as it is: no copy');
  t.equal(largeKept.byteLength, 64 * 1024);
  t.same(movableBuffers({ bytes: largeKept, contentType: '' }), [largeKept.buffer]);
  t.same(movableBuffers({ bytes: largeKept.subarray(1), contentType: '' }), [], 'a part of a buffer is never moved');

  const chunked = readBody([bytesOf(3000, 3), bytesOf(5000, 4)]);
  const chunkedKept = keepBody(chunked.body);
  t.not(chunkedKept.buffer, chunked.body.buffer, "a body of several chunks is copied out of the reader's store");
  t.equal(chunked.budget.bytes, 8000, 'its bytes reserved until released');
  chunked.release();
  t.equal(chunked.budget.bytes, 0, 'released: the budget has them back');
  t.equal(chunkedKept.byteLength, 8000, "the kept copy outlives the store's release");
  t.ok(chunkedKept.subarray(0, 3000).every((b) => b === 3) && chunkedKept.subarray(3000).every((b) => b === 4), 'byte for byte');
  chunked.res.abort();
  t.equal(chunkedKept.byteLength, 8000, 'and the client going away afterwards');
});

t.test('movableBuffers: a kept body crosses to another thread moved, not copied', async (t) => {
  const kept = keepBody(readBody([bytesOf(64 * 1024, 5)]).body);
  const received = { bytes: kept, contentType: 'application/json' };
  const arrived = structuredClone(received, { transfer: movableBuffers(received) });
  t.equal(kept.byteLength, 0, 'detached here: moved');
  t.equal(arrived.bytes.byteLength, 64 * 1024);
  t.ok(arrived.bytes.every((b) => b === 5));
  t.same(movableBuffers(null), []);
});
