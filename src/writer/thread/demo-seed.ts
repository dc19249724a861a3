// The demo data set `serve --demo` puts into an empty data dir.
import { commandTable } from '../command.js';
import type { Flag } from '../../model/flags.js';
import type { Project } from '../../model/projects.js';
import type { FlagCreate } from '../../model/schemas.js';
import type { StoreWriter } from '../../store/interfaces.js';
import { kOperator, principalOf } from '../../actor/audit-actor.js';
import { flagCreate } from '../../flags/flag-commands.js';
import { orgAddMember, orgCreate, userCreate } from '../../orgs/org-commands.js';
import { audienceCreate, projectCreate } from '../../projects/project-commands.js';
import { userPassword } from '../../sessions/session-commands.js';
import { tokenCreate, type CreatedToken } from '../../tokens/token-commands.js';
import { isEmptyStore } from '../../model/records/lookups.js';
import { markDemoSeeded } from './demo-records.js';

export interface DemoSeed {
  seeded: boolean;
  orgId: string;
  /** The demo owner's e-mail address: the web console sign-in (with the password start.ts made and printed). */
  ownerEmail: string;
  projects: Pick<Project, 'id' | 'name' | 'kind' | 'environments'>[];
  flags: Pick<Flag, 'id' | 'name' | 'projectId'>[];
  tokens: Pick<CreatedToken, 'id' | 'name' | 'permission' | 'projectId' | 'secret'>[];
}

/**
 * The demo projects' ids, fixed so that the README and docs examples (OFREP, change stream) work as pasted on a fresh
 * `npm start`; every other id is random as usual. Only ever created in an empty data dir.
 */
export const kDemoProjectIds = { shop: 'prj_DemoWebShop', platform: 'prj_DemoPlatform' } as const;

/**
 * Seeds only a data dir with nothing in it; otherwise reports `seeded: false` and changes nothing.
 * `ownerPasswordHash`: the demo owner's web console password, hashed by the caller (which prints it once).
 */
export function seedDemo(w: StoreWriter, input: { ownerPasswordHash?: string }, now: number): DemoSeed | { seeded: false } {
  if (!isEmptyStore(w)) return { seeded: false };
  // Each record a millisecond after the one before (from 100 ms ago): lists, oldest first, then show the
  // demo in the order it is written here, not by random ids as records made in one millisecond are.
  let written = now - 100;
  const at = () => ++written;
  const org = orgCreate(w, { name: 'Demo Org', plan: 'teams', principal: kOperator }, at());
  const owner = userCreate(w, { email: 'owner@demo.flagwire.test', name: 'Demo Owner' }, at());
  orgAddMember(w, { orgId: org.id, userId: owner.id, role: 'owner', principal: kOperator }, at());
  if (input.ownerPasswordHash !== undefined) userPassword(w, { userId: owner.id, passwordHash: input.ownerPasswordHash }, at());
  const shop = projectCreate(w, { name: 'Web shop', orgId: org.id, kind: 'single', principal: kOperator }, at(), kDemoProjectIds.shop);
  const platform = projectCreate(
    w,
    { name: 'Platform', orgId: org.id, kind: 'multi', environments: ['staging', 'production'], principal: kOperator },
    at(),
    kDemoProjectIds.platform,
  );
  const beta = audienceCreate(
    w,
    { principal: kOperator, projectId: shop.id, name: 'Beta testers', rules: [{ attribute: 'plan', values: ['beta'] }] },
    at(),
  );
  const create = (projectId: string, body: FlagCreate) => flagCreate(w, { projectId, body, principal: kOperator }, at());
  const flags = [
    create(shop.id, {
      name: 'new-checkout',
      description: 'The redesigned checkout',
      enabled: true,
      trafficPercentage: 50,
      cohorts: ['alice', 'bob'],
    }),
    create(shop.id, { name: 'dark-mode', enabled: true, trafficPercentage: 100, audienceId: beta.id }),
    create(shop.id, { name: 'holiday-banner', enabled: false }),
    create(platform.id, {
      name: 'search-v2',
      environments: {
        staging: { enabled: true, trafficPercentage: 100 },
        production: { enabled: true, trafficPercentage: 10, cohorts: ['qa-team'] },
      },
    }),
  ];
  const token = (projectId: string, name: string, permission: 'read' | 'write') =>
    tokenCreate(w, { projectId, principal: principalOf(owner.id), name, permission }, at());
  const tokens = [
    token(shop.id, 'demo-read', 'read'),
    token(shop.id, 'demo-write', 'write'),
    token(platform.id, 'demo-platform-write', 'write'),
  ];
  markDemoSeeded(w, now);
  return {
    seeded: true,
    orgId: org.id,
    ownerEmail: owner.email,
    projects: [shop, platform].map(({ id, name, kind, environments }) => ({ id, name, kind, environments })),
    flags: flags.map(({ id, name, projectId }) => ({ id, name, projectId })),
    tokens: tokens.map(({ id, name, permission, projectId, secret }) => ({ id, name, permission, projectId, secret })),
  };
}

/**
 * The writer's own commands, beside every capability's: the demo seed, which the server's --demo runs
 * through the writer (src/server/start.ts).
 */
export const kWriterCommands = commandTable({ seedDemo });
