// The plan thread (planner.ts): plans flag files for one front end, one at a time, each against the
// newest commit of the store, read through this thread's own read-only handle.
import { parentPort, workerData } from 'node:worker_threads';
import { FlagwireError, toErrorData } from '../errors.js';
import { requireProject } from '../model/lookups.js';
import { openStore } from '../store/open-store.js';
import { apiFlagsPlan } from './apply-commands.js';
import type { PlanReply, PlanRequest, PlanThreadStart } from './planner.js';

const start = workerData as PlanThreadStart;
const store = openStore(start.dataDir, { readOnly: true });

parentPort!.on('message', (request: PlanRequest) => {
  parentPort!.postMessage(plan(request));
});

function plan({ id, projectId, received, prune }: PlanRequest): PlanReply {
  try {
    // A plan sees every change answered before it was asked (read-your-writes), as any read does.
    store.resetReadTxn();
    const storeRevision = store.revision();
    return { id, ok: true, value: apiFlagsPlan(store, requireProject(store, projectId), received, prune), storeRevision };
  } catch (err) {
    if (err instanceof FlagwireError) return { id, ok: false, error: toErrorData(err) };
    return { id, ok: false, bug: (err as Error)?.stack ?? String(err) };
  }
}
