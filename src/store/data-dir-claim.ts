// Who is using a data dir. A server claims it for its whole life and migrate-to-postgres for its copy:
// a migration while a server runs would leave the server acknowledging writes into a file that has just
// become PostgreSQL's copy (writes PostgreSQL never gets), and a server started during a migration the
// same. LMDB's own lock file cannot say this: it serialises writers, and Node reads no fcntl lock.
//
// A claim is a file `.flagwire-<role>.<pid>` in the data dir holding the process's start time (Linux:
// /proc/<pid>/stat), so a claim left by a process killed with kill -9, or whose pid was reused, is
// recognised as stale. Each side writes its own claim first and looks for the other's after, so of a
// server and a migration starting at once at least one sees the other and gives up.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreOpenError } from './data-file.js';
import { isRunning, startTimeOf } from './process-life.js';

export type ClaimRole = 'server' | 'migration';

export interface DataDirClaim {
  /** Removes the claim (idempotent; a data dir that turned read-only keeps it, to be found stale). */
  release(): void;
}

/** Who may not hold a claim while `role` takes one: two servers may share a data dir, as always. */
const kExcludes: Record<ClaimRole, readonly ClaimRole[]> = {
  server: ['migration'],
  migration: ['server', 'migration'],
};

const kClaimFile = /^\.flagwire-(server|migration)\.([1-9]\d*)$/;

/**
 * Claims `dataDir` for this process as `role`; throws a StoreOpenError naming the live process whose
 * claim excludes it (a server for a migration, a migration for a server or another migration).
 */
export function claimDataDir(dataDir: string, role: ClaimRole): DataDirClaim {
  const own = join(dataDir, `.flagwire-${role}.${process.pid}`);
  try {
    writeFileSync(own, startTimeOf(process.pid) ?? '');
  } catch (err) {
    throw new StoreOpenError(
      `cannot mark data directory ${dataDir} as in use (${(err as NodeJS.ErrnoException).code ?? 'error'}): it must be writable`,
    );
  }
  const release = () => rmSync(own, { force: true });
  const holder = liveClaims(dataDir).find((c) => c.pid !== process.pid && kExcludes[role].includes(c.role));
  if (holder !== undefined) {
    release();
    throw new StoreOpenError(
      role === 'migration'
        ? `data directory ${dataDir} is in use by a running ${holder.role === 'server' ? 'server' : 'migration'} (process ${holder.pid}); stop it and run the migration again`
        : `data directory ${dataDir} is being migrated to PostgreSQL (process ${holder.pid}); start the server once the migration has ended, with --database`,
    );
  }
  return {
    release() {
      try {
        release();
      } catch {
        // A file system that turned read-only: the claim stays, and is stale once this process ends.
      }
    },
  };
}

interface Claim {
  role: ClaimRole;
  pid: number;
}

/** The claims in `dataDir` whose process still runs; stale ones are removed on the way. */
function liveClaims(dataDir: string): Claim[] {
  const live: Claim[] = [];
  for (const name of readdirSync(dataDir)) {
    const m = kClaimFile.exec(name);
    if (m === null) continue;
    const claim: Claim = { role: m[1] as ClaimRole, pid: Number(m[2]) };
    let recorded: string;
    try {
      recorded = readFileSync(join(dataDir, name), 'utf8');
    } catch {
      continue; // released meanwhile
    }
    if (isRunning(claim.pid, recorded)) live.push(claim);
    else rmSync(join(dataDir, name), { force: true });
  }
  return live;
}
