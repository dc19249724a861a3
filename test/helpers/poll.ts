// Waiting for what a server does beside the request path (a delivery sent, a log updated): `get` is
// called until `ok` accepts its value, which is returned. The bound only catches a hang.
import { setTimeout as sleep } from 'node:timers/promises';

export async function pollUntil<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`never: ${what} (${JSON.stringify(v)})`);
    await sleep(50);
  }
}
