// A real node over the experiment world (experiment-server.ts) keeping raw events, for the export's
// tests: the events sent, and a reader of its export's body.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { Test } from 'tap';
import { must, startExperimentServer } from './experiment-server.js';
import { call } from './http.js';

/**
 * A node keeping `events` raw events of about 1.3 KB each (their details), sent 600 a batch: the same
 * details on each, or random ones (`random`), which no format compresses (a Parquet file as large as they).
 * `env` adds to the node's settings.
 */
export async function nodeWithRawEvents(t: Test, events: number, random = false, env: Record<string, string> = {}) {
  const started = await startExperimentServer(t, { FLAGWIRE_LOG_LEVEL: 'info', ...env });
  const { base, world, clientKey } = started;
  must(await call(base, 'PATCH', '/api/v1/events/settings', { token: world.secrets.write, body: { rawEventRetentionDays: 30 } }), 200);
  for (let sent = 0; sent < events; sent += 600) {
    const count = Math.min(600, events - sent);
    // One draw of random bytes a batch, cut into the fields: a call per 120 bytes cost 0.45 CPU s more
    // for 18,000 events (90,000 calls), for the same random hex.
    const noise = random ? randomBytes(count * 5 * 120).toString('hex') : '';
    const field = (n: number) => (random ? noise.slice(n * 240, (n + 1) * 240) : 'x'.repeat(240));
    const batch = Array.from({ length: count }, (_, i) => ({
      kind: 'track',
      key: 'purchase',
      targetingKey: `user-${sent + i}`,
      value: sent + i,
      details: Object.fromEntries(Array.from({ length: 5 }, (_, f) => [`field${f}`, field(i * 5 + f)])),
      timestamp: Date.now(),
    }));
    must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events: batch } }), 200);
  }
  /** The export's body, its status checked (200). */
  const reader = async (format: 'jsonl' | 'parquet' = 'jsonl') => {
    const r = await fetch(`${base}/api/v1/events/export?format=${format}`, { headers: { authorization: `Bearer ${world.secrets.read}` } });
    t.equal(r.status, 200);
    return r.body!.getReader();
  };
  return { ...started, reader };
}

/** The names in `dataDir` of what looks like an export's scratch folder (src/events/export-scratch.ts), sorted. */
export function scratchFolders(dataDir: string): string[] {
  return readdirSync(dataDir)
    .filter((name) => name.startsWith('.export-'))
    .sort();
}
