// `node dump-store.js DATA_DIR`: prints every project's flags and audit entries as one JSON object.
// Run in a child process by fresh-read.ts, so the reader is a process that opened the data file anew
// (after a crash, what matters is what is on disk, not what a long-lived reader's snapshot shows).
import { Store } from './store.js';
import { listFlags } from '../../src/flag-records/flag-store.js';

const store = Store.open(process.argv[2]!, { readOnly: true });
const projects = store.listProjects().map((p) => ({
  id: p.id,
  flags: listFlags(store, p.id),
  audit: store.listAudit(p.id, { limit: 10_000_000, before: null }),
}));
const raw = store as unknown as { db: { meta: { get(key: string): unknown } } };
process.stdout.write(JSON.stringify({ configSeq: store.configSeq(), auditSeq: raw.db.meta.get('auditSeq') ?? 0, projects }));
await store.close();
