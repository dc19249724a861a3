// `@flagwire/edge/worker`: a whole Cloudflare Worker (or any runtime that calls a module's default
// `fetch(request, env, ctx)`), its settings from the worker's bindings, read once when the first request
// comes (docs/edge.md: Settings):
//
//   FLAGWIRE_PROJECT    the project served (required)
//   FLAGWIRE_ENV        of a multi-environment project, the environment served
//   FLAGWIRE_URL        a Flagwire node or relay, and FLAGWIRE_TOKEN a read token of the project; or
//   FLAGWIRE_SNAPSHOTS  a KV namespace holding the snapshot (FLAGWIRE_SNAPSHOT_KEY: its key)
//   FLAGWIRE_POLL_MS    how old the snapshot may get before a request asks for a newer one
import { FlagwireEdge, type FlagwireEdgeOptions, type SnapshotStore, type WaitUntil } from './edge.js';

/** The bindings the worker reads. */
export interface FlagwireWorkerEnv {
  readonly FLAGWIRE_PROJECT?: string;
  readonly FLAGWIRE_ENV?: string;
  readonly FLAGWIRE_URL?: string;
  readonly FLAGWIRE_TOKEN?: string;
  readonly FLAGWIRE_SNAPSHOTS?: SnapshotStore;
  readonly FLAGWIRE_SNAPSHOT_KEY?: string;
  readonly FLAGWIRE_POLL_MS?: string;
}

let edge: FlagwireEdge | null = null;

/** The worker's FlagwireEdge, made from `env` on first use: one per isolate, shared by its requests. */
export function edgeOf(env: FlagwireWorkerEnv): FlagwireEdge {
  edge ??= new FlagwireEdge(optionsOf(env));
  return edge;
}

export function optionsOf(env: FlagwireWorkerEnv): FlagwireEdgeOptions {
  if (env.FLAGWIRE_PROJECT === undefined || env.FLAGWIRE_PROJECT === '') {
    throw new Error('Set FLAGWIRE_PROJECT to the id of the project this worker serves (docs/edge.md).');
  }
  const options: FlagwireEdgeOptions = { project: env.FLAGWIRE_PROJECT, environment: nonEmpty(env.FLAGWIRE_ENV) };
  if (env.FLAGWIRE_URL !== undefined && env.FLAGWIRE_TOKEN !== undefined) {
    options.url = env.FLAGWIRE_URL;
    options.token = env.FLAGWIRE_TOKEN;
  }
  if (env.FLAGWIRE_SNAPSHOTS !== undefined) options.store = env.FLAGWIRE_SNAPSHOTS;
  const key = nonEmpty(env.FLAGWIRE_SNAPSHOT_KEY);
  if (key !== null) options.storeKey = key;
  const pollMs = Number(env.FLAGWIRE_POLL_MS ?? '');
  if (env.FLAGWIRE_POLL_MS !== undefined && Number.isFinite(pollMs)) options.pollMs = pollMs;
  return options;
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

export default {
  fetch(request: Request, env: FlagwireWorkerEnv, ctx: WaitUntil): Promise<Response> {
    return edgeOf(env).fetch(request, ctx);
  },
};
