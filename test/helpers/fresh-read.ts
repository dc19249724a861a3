// A read of a data dir by a new process (dump-store.ts), as a StoreReader subset: what verification of
// "acknowledged means on disk" should use, rather than a reader this test process kept open.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AuditEntry } from '../../src/model/audit.js';
import type { Flag } from '../../src/model/flags.js';
import type { AuditPage } from '../../src/store/interfaces.js';
import { plainNode } from './plain-process.js';

const kDump = fileURLToPath(new URL('./dump-store.js', import.meta.url));

export interface FreshRead {
  configSeq: number;
  /** The last audit sequence number handed out (meta 'auditSeq'). */
  auditSeq: number;
  /** Audit entries of every project. */
  auditCount: number;
  getFlag(id: string): Flag | undefined;
  listFlags(projectId: string): Flag[];
  listAudit(projectId: string, page: AuditPage): AuditEntry[];
}

export function freshRead(dataDir: string): Promise<FreshRead> {
  return new Promise((resolve, reject) => {
    execFile(...plainNode([kDump, dataDir]), { maxBuffer: 1 << 30 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`reading ${dataDir} in a new process failed: ${err.message}\n${stderr}`));
        return;
      }
      const dump = JSON.parse(stdout) as {
        configSeq: number;
        auditSeq: number;
        projects: { id: string; flags: Flag[]; audit: AuditEntry[] }[];
      };
      const flags = new Map(dump.projects.flatMap((p) => p.flags.map((f) => [f.id, f] as const)));
      resolve({
        configSeq: dump.configSeq,
        auditSeq: dump.auditSeq,
        auditCount: dump.projects.reduce((n, p) => n + p.audit.length, 0),
        getFlag: (id) => flags.get(id),
        listFlags: (projectId) => dump.projects.find((p) => p.id === projectId)?.flags ?? [],
        listAudit: (projectId) => dump.projects.find((p) => p.id === projectId)?.audit ?? [],
      });
    });
  });
}
