// A change stream's response as a test holds it, in process (no socket): it records what the feed writes,
// and `abort()` is the client going away.
import type { PendingResponse } from '../../src/http/http.js';

export function fakeResponse() {
  let onAborted = () => {};
  let text = '';
  const res = {
    cork: (fn: () => void) => fn(),
    writeStatus: () => res,
    writeHeader: () => res,
    write: (chunk: string) => {
      text += chunk;
      return true;
    },
    onWritable: () => res,
    onAborted: (fn: () => void) => {
      onAborted = fn;
      return res;
    },
    end: () => res,
    close: () => res,
  };
  return { res: res as unknown as PendingResponse, text: () => text, abort: () => onAborted() };
}
