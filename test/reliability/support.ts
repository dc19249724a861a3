// Shared by the reliability tests: the long-run switch, the server settings that keep the abuse limits
// out of the way of load and fuzzing, a data set with every kind of project and token, and checks of
// the spec's response shapes.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { buildWorld, type World } from '../helpers/world.js';
import { kNoEvalBodyBudget } from '../helpers/world-server.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { listAudiences } from '../../src/model/records/project-records.js';

/** FLAGWIRE_LONG=1 (scripts/reliability-long.sh) runs the bigger versions of the crash-safety and fuzz tests. */
export const kLong = process.env.FLAGWIRE_LONG === '1';

/**
 * Load and fuzzing send thousands of requests from one address: lift the rate limit, the lockout and the
 * address's evaluation body bytes per second (to its most, 1 GiB).
 */
export const kUnlimited = {
  FLAGWIRE_RATE_LIMIT: '1000000000',
  FLAGWIRE_AUTH_FAIL_LIMIT: '1000000000',
  ...kNoEvalBodyBudget,
} as const;

export interface RichWorld extends World {
  /** A multi-environment project whose environments are named like Object.prototype members. */
  proto: { project: string; flag: string; secret: string; tokenId: string };
  /** Org B's multi-environment project. */
  multiB: { project: string; flag: string; secret: string; readSecret: string; audience: string };
  /** Tokens refused although real: revoked and expired (and `free`, whose organisation fell below Teams). */
  refused: { revoked: string; expired: string };
  /** Every flag id in the data set, with its project. */
  flags: { id: string; project: string; name: string }[];
  projects: string[];
  audiences: { id: string; project: string }[];
}

/**
 * buildWorld plus: an org-B multi project, a project with environments "constructor", "toString" and
 * "valueOf", audiences attached to flags (so evaluation runs audience rules), a revoked and an expired token.
 */
export function buildRichWorld(dataDir: string): RichWorld {
  const world = buildWorld(dataDir);
  const { run, ids } = world;
  const dayMs = 24 * 3600 * 1000;
  run('flagPatch', {
    flagId: ids.flag2,
    env: null,
    patch: { audienceId: ids.audience, enabled: true, trafficPercentage: 100 },
    principal: kOperator,
  });
  run('flagPatch', {
    flagId: ids.groupFlag,
    env: 'production',
    patch: { audienceId: ids.multiAudience, enabled: true },
    principal: kOperator,
  });

  const protoProject = run('projectCreate', {
    principal: kOperator,
    name: 'Proto',
    orgId: ids.orgA,
    kind: 'multi',
    environments: ['constructor', 'toString', 'valueOf'],
  }).id;
  const protoAudience = run('audienceCreate', {
    principal: kOperator,
    projectId: protoProject,
    name: 'Proto',
    rules: [
      { attribute: 'constructor', values: ['x'] },
      { attribute: '__proto__', values: ['y'] },
    ],
  }).id;
  const protoFlag = run('flagCreate', {
    projectId: protoProject,
    body: { name: 'proto', environments: { toString: { enabled: true, trafficPercentage: 100, audienceId: protoAudience } } },
    principal: kOperator,
  }).id;
  const protoToken = run('tokenCreate', {
    projectId: protoProject,
    principal: principalOf(ids.owner),
    name: 'proto-write',
    permission: 'write',
  });

  const multiB = run('projectCreate', {
    principal: kOperator,
    name: 'B platform',
    orgId: ids.orgB,
    kind: 'multi',
    environments: ['staging', 'production'],
  }).id;
  const audienceMultiB = run('audienceCreate', {
    principal: kOperator,
    projectId: multiB,
    name: 'Beta',
    rules: [{ attribute: 'plan', values: ['beta'] }],
  }).id;
  const flagMultiB = run('flagCreate', {
    projectId: multiB,
    body: { name: 'search', environments: { production: { enabled: true, trafficPercentage: 30, audienceId: audienceMultiB } } },
    principal: kOperator,
  }).id;
  const ownerB = principalOf(ids.ownerB);
  const multiBWrite = run('tokenCreate', { projectId: multiB, principal: ownerB, name: 'b-platform-write', permission: 'write' });
  const multiBRead = run('tokenCreate', {
    projectId: multiB,
    principal: ownerB,
    name: 'b-platform-read',
    permission: 'read',
    environments: ['production'],
  });

  const revoked = run('tokenCreate', { projectId: ids.single, principal: principalOf(ids.admin), name: 'revoked', permission: 'write' });
  run('tokenRevoke', { tokenId: revoked.id, principal: principalOf(ids.admin) });
  const expired = run(
    'tokenCreate',
    { projectId: ids.single, principal: principalOf(ids.admin), name: 'expired', permission: 'write', expires: '30d' },
    Date.now() - 31 * dayMs,
  );

  const projects = [ids.single, ids.multi, ids.singleB, ids.free, protoProject, multiB];
  world.store.resetReadTxn();
  const flags = projects.flatMap((project) => listFlags(world.store, project).map((f) => ({ id: f.id, project, name: f.name })));
  const audiences = projects.flatMap((project) => listAudiences(world.store, project).map((a) => ({ id: a.id, project })));
  return {
    ...world,
    proto: { project: protoProject, flag: protoFlag, secret: protoToken.secret, tokenId: protoToken.id },
    multiB: { project: multiB, flag: flagMultiB, secret: multiBWrite.secret, readSecret: multiBRead.secret, audience: audienceMultiB },
    refused: { revoked: revoked.secret, expired: expired.secret },
    flags,
    projects,
    audiences,
  };
}

/** Resident memory of a process, MiB (Linux). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Sockets a process holds open (Linux): its listen socket plus one per connection it has not closed. */
export function socketCount(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

// ---- the spec's shapes ---------------------------------------------------------------------------

const isInt = (v: unknown) => Number.isInteger(v);
const isStringArray = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isAudience = (v: unknown) => v === null || typeof v === 'string';

/** Problems with a flag representation (spec: Flag representation), [] when it has the spec's shape. */
export function flagShapeProblems(flag: any): string[] {
  const problems: string[] = [];
  if (flag === null || typeof flag !== 'object') return ['not an object'];
  if (typeof flag.id !== 'string' || typeof flag.name !== 'string') problems.push('id/name');
  if (flag.kind !== 'flag' && flag.kind !== 'groupflag') problems.push('kind');
  if (!isInt(flag.updatedAt)) problems.push('updatedAt');
  const flat = (s: any, where: string) => {
    if (typeof s.enabled !== 'boolean') problems.push(`${where}enabled`);
    if (!isInt(s.trafficPercentage) || s.trafficPercentage < 0 || s.trafficPercentage > 100) problems.push(`${where}trafficPercentage`);
    if (!isStringArray(s.cohorts)) problems.push(`${where}cohorts`);
    if (!isAudience(s.audienceId)) problems.push(`${where}audienceId`);
  };
  if (flag.kind === 'groupflag' && flag.environment === undefined) {
    if (flag.environments === null || typeof flag.environments !== 'object') problems.push('environments');
    else
      for (const [env, entry] of Object.entries(flag.environments as Record<string, any>)) {
        flat(entry, `environments.${env}.`);
        if (!isInt(entry.updatedAt)) problems.push(`environments.${env}.updatedAt`);
      }
  } else {
    flat(flag, '');
  }
  return problems;
}

/** Problems with an Evaluation API answer: exactly {id, name, enabled}. */
export function evalShapeProblems(value: any): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ['not an object'];
  const keys = Object.keys(value).sort().join(',');
  const problems = keys === 'enabled,id,name' ? [] : [`keys ${keys}`];
  if (typeof value.id !== 'string' || typeof value.name !== 'string' || typeof value.enabled !== 'boolean') problems.push('types');
  return problems;
}
