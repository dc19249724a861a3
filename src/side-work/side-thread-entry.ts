// The side thread (side-thread.ts): runs one front end's jobs (jobs.ts), one at a time, each against the
// newest commit of the store, read through this thread's own read-only handle.
import { parentPort, workerData } from 'node:worker_threads';
import { FlagwireError, toErrorData } from '../errors.js';
import { openStore } from '../store/open-store.js';
import { kSideJobs } from './jobs.js';
import type { SideReply, SideRequest, SideThreadStart } from './side-thread.js';

const start = workerData as SideThreadStart;
const store = openStore(start.dataDir, { readOnly: true });

parentPort!.on('message', (request: SideRequest) => {
  parentPort!.postMessage(run(request));
});

function run({ id, job, input }: SideRequest): SideReply {
  try {
    // A job sees every change answered before it was asked (read-your-writes), as any read does.
    store.resetReadTxn();
    const storeRevision = store.revision();
    const fn = kSideJobs[job] as (r: typeof store, input: unknown) => unknown;
    return { id, ok: true, value: fn(store, input), storeRevision };
  } catch (err) {
    if (err instanceof FlagwireError) return { id, ok: false, error: toErrorData(err) };
    return { id, ok: false, bug: (err as Error)?.stack ?? String(err) };
  }
}
