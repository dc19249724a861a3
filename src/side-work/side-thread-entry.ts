// The side thread (side-thread.ts): runs one front end's jobs, one at a time in the order asked, each
// against the newest commit of the store, read through this thread's own read-only handle. A job's
// module is imported at its first use (then from the module cache).
import { parentPort, workerData } from 'node:worker_threads';
import { FlagwireError, toErrorData } from '../errors.js';
import type { StoreReader } from '../store/interfaces.js';
import { openStore } from '../store/open-store.js';
import type { SideReply, SideRequest, SideThreadStart } from './side-thread.js';

const start = workerData as SideThreadStart;
const store = openStore(start.dataDir, { readOnly: true });

let queue = Promise.resolve();
parentPort!.on('message', (request: SideRequest) => {
  queue = queue.then(async () => parentPort!.postMessage(await run(request)));
});

async function run({ id, module, name, input }: SideRequest): Promise<SideReply> {
  try {
    const fn = ((await import(module)) as Record<string, unknown>)[name];
    if (typeof fn !== 'function') throw new Error(`no side job ${name} in ${module}`);
    // A job sees every change answered before it was asked (read-your-writes), as any read does.
    store.resetReadTxn();
    const storeRevision = store.revision();
    return { id, ok: true, value: (fn as (r: StoreReader, input: unknown) => unknown)(store, input), storeRevision };
  } catch (err) {
    if (err instanceof FlagwireError) return { id, ok: false, error: toErrorData(err) };
    return { id, ok: false, bug: (err as Error)?.stack ?? String(err) };
  }
}
