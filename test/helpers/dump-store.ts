// `node dump-store.js DATA_DIR`: prints every project's flags and audit entries as one JSON object.
// Run in a child process by fresh-read.ts, so the reader is a process that opened the data file anew
// (after a crash, what matters is what is on disk, not what a long-lived reader's snapshot shows).
//
// Opened read-only without the capabilities' layout, as the server's eval workers open it
// (src/evaluation/engine/worker.ts): a read-only open reads the databases the file holds as they are, and
// reads need no layout (it says what a deletion cascades to, and which databases a write creates).
// Loading the layout (src/capabilities.js, every capability's modules) was 0.33 CPU s of each dump's
// process; reliability/crash-server makes 20 of them.
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { listProjects } from '../../src/model/records/project-records.js';

const store = LmdbStore.open(process.argv[2]!, { readOnly: true });
const projects = listProjects(store).map((p) => ({
  id: p.id,
  flags: listFlags(store, p.id),
  audit: store.listAudit(p.id, { limit: 10_000_000, before: null }),
}));
const raw = store as unknown as { db: { meta: { get(key: string): unknown } } };
process.stdout.write(JSON.stringify({ configSeq: store.configSeq(), auditSeq: raw.db.meta.get('auditSeq') ?? 0, projects }));
await store.close();
