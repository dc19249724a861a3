// A change stream's raw Server-Sent Events text, read over plain fetch for a while, as a (reconnecting)
// EventSource would receive it.

/** Reads the stream at `path` for `ms`; `lastEventId`: the Last-Event-ID header a reconnect sends. */
export async function readStream(baseUrl: string, path: string, ms: number, lastEventId?: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}${path}`, {
    signal: controller.signal,
    headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
  });
  let text = '';
  const reader = res.body!.getReader();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } catch {
    // aborted: the time is up
  }
  clearTimeout(timer);
  return text;
}

/** The id of the stream's `ready` event: the revision it starts from. */
export const readyId = (text: string): number => Number(/id: (\d+)\nevent: ready\n/.exec(text)![1]);
