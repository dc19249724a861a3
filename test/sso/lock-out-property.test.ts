// No sequence of role, SCIM and single sign-on changes locks an organisation's Owners out (issue 61):
// random sequences of role changes (by the operator and by each member), passwords set, SSO only turned
// on and off, break-glass Owners named and cleared, members added to a second SSO-only organisation,
// single sign-on removed, and SCIM deprovisioning (deactivated or deleted), each applied or refused
// through the writer's own path (write checks included); after every step each organisation keeps an
// Owner, and where its sign-in is SSO only, its break-glass Owner is an Owner with a password whose
// password sign-in nothing refuses.
import t from 'tap';
import fc from 'fast-check';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kRoles } from '../../src/model/accounts.js';
import { hashPassword } from '../../src/model/passwords.js';
import { jsonBody } from '../../src/model/request-body.js';
import { passwordSignInRefusal } from '../../src/sso/lockout.js';
import { kSsoSettingsRecords } from '../../src/sso/records.js';
import { kScimSettingsRecords } from '../../src/scim/records.js';
import { commandStore } from '../helpers/command-store.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { getRole, listMembers } from '../../src/model/records/member-records.js';
import { getCredential } from '../../src/model/records/session-records.js';

const at = Date.UTC(2030, 0, 1);
const kIdp = { issuer: 'https://idp.acme.test', clientId: 'flagwire', clientSecret: 'very-secret-value' };
const kPeople = [0, 1, 2, 3, 4] as const;
const kScimBase = 'http://flagwire.test/scim/v2';
const person = fc.constantFrom(...kPeople);
const org = fc.constantFrom(0, 1);
const by = fc.option(person, { nil: null });

const step = fc.oneof(
  fc.record({ op: fc.constant('role' as const), org, who: person, role: fc.constantFrom(...kRoles), by }),
  fc.record({ op: fc.constant('password' as const), who: person }),
  fc.record({
    op: fc.constant('sso' as const),
    org,
    ssoOnly: fc.option(fc.boolean(), { nil: undefined }),
    breakGlass: fc.option(fc.option(person, { nil: null }), { nil: undefined }),
    by,
  }),
  fc.record({ op: fc.constant('remove' as const), org, by }),
  fc.record({ op: fc.constant('deprovision' as const), org, who: person, verb: fc.constantFrom('patch' as const, 'delete' as const) }),
);

t.test(
  'random role, SCIM and SSO changes leave every organisation an Owner, and an SSO-only one its break-glass Owner sign-in',
  async (t) => {
    const passwordHash = await hashPassword('a long enough password');
    // One store for every sequence (each its own organisations and people): opening one per sequence is most of a second.
    const { store, run } = commandStore(t, 'flagwire-sso-prop-', at);
    let runs = 0;
    let ssoOnlySteps = 0;
    let deprovisioned = 0;
    let lastOwnerKept = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 15 }), async (steps) => {
        runs++;
        // Person 0 owns both organisations with a password, and is the first's break-glass Owner (it starts SSO
        // only); 1 owns the first, 2 is its admin, 3 the second's editor, 4 no one's. One transaction: each costs a sync.
        const { orgs, users } = store.transact((w) => {
          const made = (name: Parameters<typeof runCommand>[1], input: unknown) => runCommand(w, name as never, input as never, at);
          const orgs = [0, 1].map(
            (i) => (made('orgCreate', { name: `Org ${i}.${runs}`, plan: 'teams', principal: kOperator }) as { id: string }).id,
          );
          const users = kPeople.map((i) => (made('userCreate', { email: `p${i}.${runs}@acme.test` }) as { id: string }).id);
          made('userPassword', { userId: users[0], passwordHash });
          for (const [o, u, role] of [
            [0, 0, 'owner'],
            [0, 1, 'owner'],
            [0, 2, 'admin'],
            [1, 0, 'owner'],
            [1, 3, 'editor'],
          ] as const)
            made('orgAddMember', { principal: kOperator, orgId: orgs[o], userId: users[u], role });
          made('ssoSet', {
            orgId: orgs[0],
            principal: kOperator,
            received: jsonBody(JSON.stringify({ ...kIdp, ssoOnly: true, breakGlassUserId: users[0] })),
          });
          made('ssoSet', { orgId: orgs[1], principal: kOperator, received: jsonBody(JSON.stringify(kIdp)) });
          // SCIM on in both, each member linked to its SCIM user (by address), so deprovisioning reaches them.
          for (const orgId of orgs) {
            made('scimEnable', { orgId, principal: kOperator });
            const write = { orgId, secretHash: store.getKeyed(kScimSettingsRecords, orgId)!.secretHash, base: kScimBase, verb: 'create' };
            for (const m of listMembers(store, orgId))
              made('scimUserWrite', { ...write, body: { userName: `p${users.indexOf(m.userId)}.${runs}@acme.test` } });
          }
          return { orgs, users };
        });
        const principal = (who: number | null) => (who === null ? kOperator : principalOf(users[who]!));
        for (const s of steps) {
          try {
            if (s.op === 'role')
              run('orgAddMember', { principal: principal(s.by), orgId: orgs[s.org]!, userId: users[s.who]!, role: s.role });
            else if (s.op === 'password') run('userPassword', { userId: users[s.who]!, passwordHash });
            else if (s.op === 'remove') run('ssoRemove', { orgId: orgs[s.org]!, principal: principal(s.by) });
            else if (s.op === 'deprovision') {
              const orgId = orgs[s.org]!;
              const secretHash = store.getKeyed(kScimSettingsRecords, orgId)!.secretHash;
              const body = s.verb === 'patch' ? { Operations: [{ op: 'replace', value: { active: false } }] } : undefined;
              run('scimUserWrite', { orgId, secretHash, base: kScimBase, verb: s.verb, id: users[s.who]!, body });
              deprovisioned++;
            } else {
              const body = {
                ...(store.getKeyed(kSsoSettingsRecords, orgs[s.org]!) === undefined ? kIdp : {}),
                ...(s.ssoOnly === undefined ? {} : { ssoOnly: s.ssoOnly }),
                ...(s.breakGlass === undefined ? {} : { breakGlassUserId: s.breakGlass === null ? null : users[s.breakGlass]! }),
              };
              run('ssoSet', { orgId: orgs[s.org]!, principal: principal(s.by), received: jsonBody(JSON.stringify(body)) });
            }
          } catch (err) {
            // A refusal is an answer the rules allow; anything but the envelope's refusals is a failure.
            if (!['INVALID_REQUEST', 'FORBIDDEN', 'NOT_FOUND'].includes((err as { code?: string }).code ?? '')) throw err;
            if (/keeps at least one Owner/.test((err as { detail?: string }).detail ?? '')) lastOwnerKept++;
          }
          for (const orgId of orgs) {
            if (!listMembers(store, orgId).some((m) => m.role === 'owner'))
              throw new Error(`${orgId} has no Owner after ${JSON.stringify(s)}`);
            // Without SSO only, the Owners sign in as before (the operator may still do anything, as ever).
            const settings = store.getKeyed(kSsoSettingsRecords, orgId);
            if (settings?.ssoOnly !== true) continue;
            ssoOnlySteps++;
            const glass = settings.breakGlassUserId;
            const able =
              glass !== null &&
              getRole(store, orgId, glass) === 'owner' &&
              getCredential(store, glass) !== undefined &&
              passwordSignInRefusal(store, glass) === null;
            if (!able) throw new Error(`${orgId} is SSO only and its break-glass Owner ${glass} cannot sign in after ${JSON.stringify(s)}`);
          }
        }
      }),
      { numRuns: 50, seed: 61 },
    );
    t.ok(runs >= 50, 'every generated sequence ran');
    t.ok(deprovisioned > 10, `${deprovisioned} deprovisionings applied: SCIM's path was exercised`);
    t.ok(lastOwnerKept > 3, `${lastOwnerKept} changes refused for taking the last Owner away: the rule was exercised`);
    t.ok(ssoOnlySteps > 100, `SSO only was on after ${ssoOnlySteps} steps: the rule was exercised`);
  },
);
