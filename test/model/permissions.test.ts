// The one table of who may do what (src/model/permissions.ts): every role × every action × creator or
// not, written out here independently of the module's table, and every edge of a token's status.
import t from 'tap';
import { kRoles } from '../../src/model/accounts.js';
import {
  type Action,
  can,
  canManageAnyToken,
  canManageToken,
  holdsTokenSlot,
  inRotationGrace,
  kActions,
  type ProjectRole,
  secretStatus,
  tokenStatus,
} from '../../src/model/permissions.js';
import type { FlagwireError } from '../../src/errors.js';
import { kMemberRecords, projectRole } from '../../src/model/records/member-records.js';
import { kOrgRecords } from '../../src/model/records/org-records.js';
import { kProjectRecords } from '../../src/model/records/project-records.js';
import { authorizeToken } from '../../src/model/records/token-access.js';
import type { Token } from '../../src/model/tokens.js';

type Expect = boolean | 'creator';
// Spec (Authentication 6; States and transitions): create: Editor, Admin or Owner; revoke and rotate:
// the creator and any Admin (an Owner is at least an Admin); a Viewer changes nothing.
const kExpected: Record<ProjectRole, Record<Action, Expect>> = {
  owner: {
    read: true,
    editFlags: true,
    configure: true,
    createToken: true,
    rotateToken: true,
    revokeToken: true,
    manageMembers: true,
    grantOwner: true,
  },
  admin: {
    read: true,
    editFlags: true,
    configure: true,
    createToken: true,
    rotateToken: true,
    revokeToken: true,
    manageMembers: true,
    grantOwner: false,
  },
  editor: {
    read: true,
    editFlags: true,
    configure: false,
    createToken: true,
    rotateToken: 'creator',
    revokeToken: 'creator',
    manageMembers: false,
    grantOwner: false,
  },
  viewer: {
    read: true,
    editFlags: false,
    configure: false,
    createToken: false,
    rotateToken: false,
    revokeToken: false,
    manageMembers: false,
    grantOwner: false,
  },
  personal: {
    read: true,
    editFlags: true,
    configure: true,
    createToken: false,
    rotateToken: false,
    revokeToken: false,
    manageMembers: false,
    grantOwner: false,
  },
};

t.test('every role × every action × creator or not', async (t) => {
  t.strictSame(Object.keys(kExpected).sort(), [...kRoles, 'personal'].sort(), 'every role is in the table');
  for (const role of Object.keys(kExpected) as ProjectRole[]) {
    for (const action of kActions) {
      const expected = kExpected[role][action];
      for (const isCreator of [false, true]) {
        const want = expected === 'creator' ? isCreator : expected;
        t.equal(
          can(role, action, { isCreator }),
          want,
          `${role} ${want ? 'may' : 'may not'} ${action} (${isCreator ? '' : 'not '}creator)`,
        );
      }
      t.equal(can(undefined, action, { isCreator: true }), false, `a non-member may not ${action}`);
    }
  }
});

t.test('a Viewer changes nothing: not even the token they created', async (t) => {
  for (const action of kActions) t.equal(can('viewer', action, { isCreator: true }), action === 'read', action);
  const mine = { createdBy: 'u1' };
  for (const verb of ['rotate', 'revoke'] as const) {
    t.equal(canManageToken('viewer', verb, mine, 'u1'), false, `viewer creator may not ${verb}`);
    t.equal(canManageToken('editor', verb, mine, 'u1'), true, `editor creator may ${verb}`);
    t.equal(canManageToken('editor', verb, mine, 'u2'), false, `editor non-creator may not ${verb}`);
    t.equal(canManageToken('admin', verb, mine, 'u2'), true, `admin may ${verb} any`);
    t.equal(canManageToken('owner', verb, mine, 'u2'), true, `owner may ${verb} any`);
    t.equal(canManageToken(undefined, verb, mine, 'u1'), false, `a creator no longer a member may not ${verb}`);
  }
  t.strictSame((['owner', 'admin', 'editor', 'viewer', 'personal', undefined] as const).map(canManageAnyToken), [
    true,
    true,
    false,
    false,
    false,
    false,
  ]);
});

t.test('projectRole: the organisation role, or personal for the owner of a personal project', async (t) => {
  const roles: Record<string, 'editor'> = { u1: 'editor' };
  // The memberships as the member kind reads them (by its composite key); nothing else of the store is read.
  const members = new Map(Object.entries(roles).map(([userId, role]) => [kMemberRecords.key({ orgId: 'o1', userId, role }), role]));
  const r = {
    getKeyed: (kind: unknown, key: string) => {
      const role = kind === kMemberRecords ? members.get(key) : undefined;
      return role === undefined ? undefined : { role };
    },
  } as unknown as Parameters<typeof projectRole>[0];
  t.equal(projectRole(r, { orgId: 'o1', ownerUserId: null }, 'u1'), 'editor');
  t.equal(projectRole(r, { orgId: 'o1', ownerUserId: null }, 'u2'), undefined);
  t.equal(projectRole(r, { orgId: null, ownerUserId: 'u2' }, 'u2'), 'personal');
  t.equal(projectRole(r, { orgId: null, ownerUserId: 'u2' }, 'u1'), undefined);
});

t.test('token status: active, expired from the instant of expiry, revoked over expired', async (t) => {
  const now = 1_700_000_000_000;
  const cases: [string, { revokedAt: number | null; expiresAt: number }, string][] = [
    ['never expires', { revokedAt: null, expiresAt: 0 }, 'active'],
    ['expires a millisecond later', { revokedAt: null, expiresAt: now + 1 }, 'active'],
    ['expires exactly now', { revokedAt: null, expiresAt: now }, 'expired'],
    ['expired a millisecond ago', { revokedAt: null, expiresAt: now - 1 }, 'expired'],
    ['revoked, never expires', { revokedAt: now - 5, expiresAt: 0 }, 'revoked'],
    ['revoked and expired', { revokedAt: now - 5, expiresAt: now - 1 }, 'revoked'],
    ['revoked exactly now, expires later', { revokedAt: now, expiresAt: now + 1000 }, 'revoked'],
  ];
  for (const [name, token, want] of cases) t.equal(tokenStatus(token, now), want, name);
});

t.test(
  "the status a secret authenticates with: a token's own, except in a rotation's grace period (as before it was revoked)",
  async (t) => {
    const now = 1_700_000_000_000;
    type Case = [string, { revokedAt: number | null; expiresAt: number; graceEndsAt?: number }, string];
    const cases: Case[] = [
      ['active', { revokedAt: null, expiresAt: 0 }, 'active'],
      ['expired', { revokedAt: null, expiresAt: now }, 'expired'],
      ['revoked, no grace', { revokedAt: now - 5, expiresAt: 0 }, 'revoked'],
      ['in its grace period', { revokedAt: now - 5, expiresAt: 0, graceEndsAt: now + 1 }, 'active'],
      ['in its grace period, expiring later', { revokedAt: now - 5, expiresAt: now + 1, graceEndsAt: now + 10 }, 'active'],
      ['in its grace period but expired', { revokedAt: now - 5, expiresAt: now, graceEndsAt: now + 10 }, 'expired'],
      ['its grace period ending now', { revokedAt: now - 5, expiresAt: 0, graceEndsAt: now }, 'revoked'],
      ['its grace period over, expired too', { revokedAt: now - 5, expiresAt: now - 1, graceEndsAt: now - 1 }, 'revoked'],
    ];
    for (const [name, token, want] of cases) t.equal(secretStatus(token, now), want, name);
  },
);

t.test('token slots: every token not revoked holds one, expired ones included', async (t) => {
  t.equal(holdsTokenSlot({ revokedAt: null }), true);
  t.equal(holdsTokenSlot({ revokedAt: 5 }), false);
});

t.test("a rotation's grace period: the old secret works until graceEndsAt, not at it", async (t) => {
  const now = 1_700_000_000_000;
  t.equal(inRotationGrace({ revokedAt: now - 5, graceEndsAt: now + 1 }, now), true, 'a millisecond before the end');
  t.equal(inRotationGrace({ revokedAt: now - 5, graceEndsAt: now }, now), false, 'at the end');
  t.equal(inRotationGrace({ revokedAt: now - 5 }, now), false, 'rotated without one');
  t.equal(inRotationGrace({ revokedAt: null, graceEndsAt: now + 1 }, now), false, 'a token not revoked has no grace');
});

t.test('a token in its grace period authenticates as it did; expiry and the plan still apply', async (t) => {
  const now = 1_700_000_000_000;
  const project = { id: 'p1', orgId: 'o1' };
  const org = { id: 'o1', plan: 'teams', standing: 'good' };
  // The project and organisation as the keyed kinds read them; nothing else of the store is read.
  const records = new Map<unknown, unknown>([
    [kProjectRecords, project],
    [kOrgRecords, org],
  ]);
  const reader = { getKeyed: (kind: unknown) => records.get(kind) } as unknown as Parameters<typeof authorizeToken>[0];
  const token = (more: Partial<Token>): Token => ({
    id: 't1',
    projectId: 'p1',
    name: 'ci',
    permission: 'write',
    environments: [],
    expiresAt: 0,
    createdAt: now - 1000,
    createdBy: 'u1',
    revokedAt: now - 10,
    secretHash: 'h',
    ...more,
  });
  const codeOf = (tk: Token) => {
    try {
      authorizeToken(reader, tk, now);
      return 'ok';
    } catch (err) {
      return (err as FlagwireError).code;
    }
  };
  t.equal(codeOf(token({ graceEndsAt: now + 1 })), 'ok', 'during the grace');
  t.equal(codeOf(token({ graceEndsAt: now })), 'TOKEN_REVOKED', 'after it: revoked');
  t.equal(codeOf(token({})), 'TOKEN_REVOKED', 'rotated without one: revoked');
  t.equal(codeOf(token({ graceEndsAt: now + 1, expiresAt: now })), 'TOKEN_EXPIRED', 'expired during the grace');
});
