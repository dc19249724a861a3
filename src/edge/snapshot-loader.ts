// Where an edge's snapshot comes from: a Flagwire node or relay over HTTP with a read token (the
// provider's own request, src/provider/snapshot-client.ts: ETag, time limit, size bound), or a value
// bound to the worker (Cloudflare KV, Vercel Edge Config) that a deploy step wrote from that route.
import { isSnapshot } from '../provider/snapshot-check.js';
import { fetchSnapshot, type SnapshotSource } from '../provider/snapshot-client.js';
import type { Snapshot } from '../model/snapshot-shape.js';
import type { SnapshotStore } from './edge.js';

/**
 * What a bound value holds (docs/edge.md: a deploy step writes it from GET /v1/snapshots/{project}):
 * `{"etag": <its ETag>, "configTag": <its Flagwire-Config-Tag>, "snapshot": {...}}`.
 */
export interface StoredSnapshot {
  readonly etag: string;
  readonly configTag: string;
  readonly snapshot: Snapshot;
}

export type Loaded =
  | { readonly modified: true; readonly stored: StoredSnapshot }
  | { readonly modified: false; readonly configTag: string };

export interface SnapshotLoader {
  /** The snapshot, or `modified: false` when the one whose ETag is `etag` is still current; throws when there is none. */
  load(etag: string | null): Promise<Loaded>;
}

/** From a node or a relay: GET /v1/snapshots/{project}[?env=] with the read token. */
export function httpLoader(source: SnapshotSource, timeoutMs: number): SnapshotLoader {
  return {
    async load(etag) {
      const answer = await fetchSnapshot(source, etag, timeoutMs);
      if (!answer.modified) return answer;
      return { modified: true, stored: { etag: answer.etag, configTag: answer.configTag, snapshot: answer.snapshot } };
    },
  };
}

/** From a bound value under `key`. */
export function storeLoader(store: SnapshotStore, key: string): SnapshotLoader {
  return {
    async load(etag) {
      const value = await store.get(key);
      if (value === null || value === undefined) throw new Error(`The binding holds no snapshot under "${key}" (docs/edge.md).`);
      const stored = storedSnapshot(typeof value === 'string' ? JSON.parse(value) : value);
      if (stored === null) throw new Error(`The value under "${key}" is not {"etag", "configTag", "snapshot"} as docs/edge.md says.`);
      return stored.etag !== '' && stored.etag === etag ? { modified: false, configTag: stored.configTag } : { modified: true, stored };
    },
  };
}

function storedSnapshot(value: unknown): StoredSnapshot | null {
  if (value === null || typeof value !== 'object') return null;
  const { etag, configTag, snapshot } = value as Record<string, unknown>;
  if (typeof etag !== 'string' || typeof configTag !== 'string' || !isSnapshot(snapshot)) return null;
  return { etag, configTag, snapshot };
}
