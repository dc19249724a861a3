// A response body sent a chunk at a time as the client reads it (an export): the next chunk is asked
// for only once uWS took the last one without buffering it, or once the socket drained, so what the
// server holds for one response is one chunk, whatever its size in all and however slowly it is read.
// Its first chunk is awaited before the status is written: a failure before any byte is still answered
// in the spec's envelope by the caller; one after it can only close the connection (the client sees a
// body cut short, never a whole-looking one). A client that reads as fast as the chunks come (uWS takes
// every write) still waits a turn of the event loop between chunks: a chunk's source (a page of raw
// events) may answer without any I/O, and then the whole body was sent while nothing else on the thread
// ran (a large export held another project's evaluations for seconds).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { kCorsOrigin, kNoSniff, type PendingResponse, statusLine, trackAbort } from './http.js';

/** How often a response waiting for its socket to drain looks whether the client went away. */
const kAbortCheckMs = 1000;

/**
 * Streams `chunks` as the body of a `status` answer. Settles once sent, or once the client went away
 * (the chunks' iterator is then closed, so what it holds is released); rejects, with `headersSent`
 * saying whether the status was written, when `chunks` fails.
 */
export async function sendStreamed(
  res: PendingResponse,
  status: number,
  contentType: string,
  headers: readonly (readonly [string, string])[],
  chunks: AsyncIterable<Uint8Array>,
): Promise<void> {
  if (!res.tracked) trackAbort(res);
  const iterator = chunks[Symbol.asyncIterator]();
  let headersSent = false;
  try {
    for (let next = await iterator.next(); ; next = await iterator.next()) {
      if (res.aborted) return;
      if (!headersSent) {
        res.cork(() => {
          res.writeStatus(statusLine(status));
          res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
          res.writeHeader(kNoSniff[0], kNoSniff[1]);
          res.writeHeader('Content-Type', contentType);
          for (const [k, v] of headers) res.writeHeader(k, v);
        });
        headersSent = true;
      }
      if (next.done) break;
      let flowing = true;
      res.cork(() => {
        flowing = res.write(next.value);
      });
      if (!flowing) await drained(res);
      else await nextTurn();
    }
    if (res.aborted) return;
    res.aborted = true;
    res.cork(() => res.end());
  } catch (err) {
    throw new StreamFailed(err, headersSent);
  } finally {
    // Closes a generator left early (the client gone): its finally blocks run (scratch files removed).
    await iterator.return?.();
  }
}

/** A streamed answer's failure: `cause`, and whether the status was already written (then only closing is left). */
export class StreamFailed extends Error {
  constructor(
    override readonly cause: unknown,
    readonly headersSent: boolean,
  ) {
    super('a streamed answer failed', { cause });
  }
}

/** Settles when uWS's buffer of `res` went out, or the client went away. */
function drained(res: PendingResponse): Promise<void> {
  return new Promise((resolve) => {
    const check = setInterval(() => {
      if (!res.aborted) return;
      clearInterval(check);
      resolve();
    }, kAbortCheckMs);
    res.onWritable(() => {
      clearInterval(check);
      resolve();
      return true;
    });
  });
}
