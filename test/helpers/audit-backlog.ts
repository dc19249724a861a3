// A data directory holding a backlog of audit entries, for the audit stream's black-box tests: buildWorld's
// world and `count` flag.patch entries more, written before a server starts (the stream reads the store,
// whatever wrote it). The store is closed again; a server opens the directory.
import { tempDataDir } from './server.js';
import { buildWorld, type World } from './world.js';

export interface AuditBacklog {
  dir: string;
  ids: World['ids'];
  secrets: World['secrets'];
  /** The entries the store holds: buildWorld's and the backlog. */
  entries: number;
}

export async function auditBacklog(count: number): Promise<AuditBacklog> {
  const dir = tempDataDir();
  const world = buildWorld(dir);
  const { ids, secrets } = world;
  world.store.transact((w) => {
    for (let i = 0; i < count; i++) {
      w.appendAudit({
        at: Date.now(),
        projectId: i % 3 === 0 ? ids.multi : ids.single,
        actor: 'operator',
        actorName: 'operator',
        action: 'flag.patch',
        flagId: ids.flag,
        env: null,
        changes: { trafficPercentage: { before: i % 100, after: (i + 1) % 100 } },
      });
    }
  });
  world.store.resetReadTxn();
  const entries = world.store.listAuditAfter(0, count * 2 + 1000).length;
  await world.store.close();
  return { dir, ids, secrets, entries };
}
