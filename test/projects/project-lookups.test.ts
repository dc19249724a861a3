// An organisation's projects and a user's personal ones, as the store finds them (listOrgProjects
// and listPersonalProjects of src/model/records/project-records.ts, the project kind's lookups): only the owner's, oldest first, in the transaction
// of every write; a data file written before the lookups is read whole by a read-only open and given them
// when opened for writing; a node's copy files what it applies. A project's name is unique among its
// owner's, found through the same lookups.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { Project } from '../../src/model/projects.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { commandStore } from '../helpers/command-store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { countRawKeys, forgetLookups, Store } from '../helpers/store.js';
import { listOrgProjects, listPersonalProjects, putProject, getProject, listProjects } from '../../src/model/records/project-records.js';

const at = Date.UTC(2030, 0, 1);
const ids = (projects: readonly Project[]) => projects.map((p) => p.id);

/** Two organisations and two users, each with projects made a minute apart; the ids by name. */
function seed(run: ReturnType<typeof commandStore>['run']) {
  const acme = run('orgCreate', { principal: kOperator, name: 'Acme' }, at);
  const beta = run('orgCreate', { principal: kOperator, name: 'Beta' }, at);
  const olive = run('userCreate', { email: 'olive@example.com', name: 'Olive' }, at);
  const pat = run('userCreate', { email: 'pat@example.com', name: 'Pat' }, at);
  let minute = 0;
  const project = (name: string, owner: { orgId: string } | { ownerUserId: string }) =>
    run('projectCreate', { principal: kOperator, name, kind: 'single', ...owner }, at + ++minute * 60_000).id;
  // Made out of their lists' order, so that oldest first is proved by the lookups' reads, not by luck.
  const acmeApi = project('Api', { orgId: acme.id });
  const betaShop = project('Shop', { orgId: beta.id });
  const oliveMine = project('Mine', { ownerUserId: olive.id });
  const acmeShop = project('Shop', { orgId: acme.id });
  const patMine = project('Mine', { ownerUserId: pat.id });
  return { acme, beta, olive, pat, acmeApi, acmeShop, betaShop, oliveMine, patMine };
}

t.test("an owner's projects: its own only, oldest first, under the keys they are filed under now", async (t) => {
  const { store, run, refused } = commandStore(t, 'flagwire-project-lookups-', at);
  const s = seed(run);
  t.strictSame(ids(listOrgProjects(store, s.acme.id)), [s.acmeApi, s.acmeShop], "Acme's, oldest first");
  t.strictSame(ids(listOrgProjects(store, s.beta.id)), [s.betaShop], "Beta's: never Acme's");
  t.strictSame(ids(listPersonalProjects(store, s.olive.id)), [s.oliveMine], "Olive's personal project");
  t.strictSame(ids(listPersonalProjects(store, s.pat.id)), [s.patMine], "Pat's");
  t.strictSame(listOrgProjects(store, s.olive.id), [], 'a user is no organisation');
  t.strictSame(listPersonalProjects(store, s.acme.id), [], 'nor an organisation a user');
  t.strictSame(listOrgProjects(store, 'org_nobody'), [], 'an organisation with none');
  t.strictSame(listOrgProjects(store, 'x'.repeat(600)), [], 'an id too long to be a key is read as having none');
  t.strictSame(
    ids(listProjects(store)),
    [s.acmeApi, s.betaShop, s.oliveMine, s.acmeShop, s.patMine],
    "every project, as before: the lookups changed no one's list",
  );

  // Written again (renamed): filed once, where it was.
  const shop = getProject(store, s.acmeShop)!;
  store.transact((w) => putProject(w, { ...shop, name: 'Store' }));
  t.strictSame(
    listOrgProjects(store, s.acme.id).map((p) => p.name),
    ['Api', 'Store'],
    'a project written again is listed once, as written',
  );

  // The name rule reads the same lookups: unique among the owner's projects, ignoring case.
  t.match(refused('projectCreate', { principal: kOperator, name: 'api', orgId: s.acme.id }).message, /already exists in organisation/);
  t.match(
    refused('projectCreate', { principal: kOperator, name: 'MINE', ownerUserId: s.olive.id }).message,
    /already exists in the personal/,
  );
  const betaApi = run('projectCreate', { principal: kOperator, name: 'Api', orgId: s.beta.id }, at + 3_600_000);
  t.strictSame(ids(listOrgProjects(store, s.beta.id)), [s.betaShop, betaApi.id], "another organisation's name is free");
});

t.test('a data file written before the lookups: read whole by a read-only open, filed when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-project-lookups-');
  const made = Store.open(dir);
  const s = made.transact((w) => seed((name, input, now) => runCommand(w, name, input, now ?? at)));
  await made.close();
  t.ok(await forgetLookups(dir, 'project'), 'this Flagwire names the project lookups');

  const reader = Store.open(dir, { readOnly: true });
  t.strictSame(ids(listOrgProjects(reader, s.acme.id)), [s.acmeApi, s.acmeShop], 'found by reading every project');
  t.strictSame(ids(listPersonalProjects(reader, s.pat.id)), [s.patMine]);
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.strictSame(ids(listOrgProjects(store, s.acme.id)), [s.acmeApi, s.acmeShop], 'the lookup built');
  t.strictSame(ids(listPersonalProjects(store, s.olive.id)), [s.oliveMine]);
  t.equal(await countRawKeys(dir, 'keyedIndexes', 'project'), 5, 'each project filed once, under its owner');
});

t.test("a node's copy files the projects it copies and applies under their owners", async (t) => {
  const source = Store.open(tempDir(t, 'flagwire-project-lookups-'));
  t.teardown(() => source.close());
  const s = source.transact((w) => seed((name, input, now) => runCommand(w, name, input, now ?? at)));
  const copy = Store.open(tempDir(t, 'flagwire-project-lookups-'));
  t.teardown(() => copy.close());
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.strictSame(ids(listOrgProjects(copy, s.acme.id)), [s.acmeApi, s.acmeShop], 'a full copy');
  t.strictSame(ids(listPersonalProjects(copy, s.olive.id)), [s.oliveMine]);

  const { settled, changes } = source.rehearse([
    (w) => runCommand(w, 'projectCreate', { principal: kOperator, name: 'Web', kind: 'single', orgId: s.beta.id }, at + 3_600_000),
  ]);
  const web = settled[0]!.ok ? (settled[0]!.value as Project).id : t.fail('the create failed');
  copy.applyRevisions([{ revision: 1, changes }]);
  t.strictSame(ids(listOrgProjects(copy, s.beta.id)), [s.betaShop, web], 'a change applied');
});
