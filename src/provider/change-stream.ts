// Flagwire's change stream (GET /v1/stream/project/{id}[?env=], src/stream/change-feed.ts) read by the
// provider: every event (`ready` on each connection, `flag`, `flag-deleted`, `audience`, `reset`) means
// "refetch the snapshot"; events carry ids only. A connection that ends, fails, or stays silent past
// three heartbeats (the server sends one every 15 s) is over: the caller reconnects with backoff.
import type { SnapshotSource } from './snapshot-client.js';

/** Silence longer than this (three of the server's 15 s heartbeats) means the connection is dead. */
const kSilenceMs = 45_000;
/** An event's line longer than this is no Flagwire event: the connection is dropped. */
const kMaxLineChars = 64 * 1024;

export function streamUrl(source: SnapshotSource): string {
  const path = `${source.url.replace(/\/+$/, '')}/v1/stream/project/${encodeURIComponent(source.project)}`;
  return source.environment === null ? path : `${path}?env=${encodeURIComponent(source.environment)}`;
}

/**
 * Follows one connection until it ends (resolves) or fails (rejects); `onEvent` is called for each event,
 * `onOpen` once the server accepted the stream. `signal` ends it.
 */
export async function followChanges(
  source: SnapshotSource,
  signal: AbortSignal,
  onOpen: () => void,
  onEvent: (name: string) => void,
): Promise<void> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal.addEventListener('abort', stop, { once: true });
  let silence = setTimeout(stop, kSilenceMs);
  try {
    const res = await fetch(streamUrl(source), { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    if (res.status !== 200 || res.body === null) {
      await res.body?.cancel();
      throw new Error(`The change stream answered ${res.status}.`);
    }
    onOpen();
    const decoder = new TextDecoder();
    let pending = '';
    let event = '';
    const reader = res.body.getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      clearTimeout(silence);
      silence = setTimeout(stop, kSilenceMs);
      pending += decoder.decode(chunk, { stream: true });
      let end = pending.indexOf('\n');
      while (end >= 0) {
        const line = pending.slice(0, end).replace(/\r$/, '');
        pending = pending.slice(end + 1);
        if (line === '') {
          if (event !== '') onEvent(event);
          event = '';
        } else if (line.startsWith('event:')) event = line.slice(6).trim();
        end = pending.indexOf('\n');
      }
      if (pending.length > kMaxLineChars) throw new Error('The change stream sent an over-long line.');
    }
  } finally {
    clearTimeout(silence);
    signal.removeEventListener('abort', stop);
  }
}
