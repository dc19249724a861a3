// An organisation's name, as the store finds it (StoreReader.findOrgByName, the org kind's `name` lookup):
// unique among the node's organisations as people tell names apart (trimmed, without case), found through
// one lookup entry in the transaction of every write instead of by reading every organisation; a data file
// written before the lookup is read whole by a read-only open and given it when opened for writing; a
// node's copy files what it copies and applies.
import { dirname } from 'node:path';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { Org } from '../../src/model/accounts.js';
import { runCommand } from '../../src/writer/thread/commands.js';
import { commandStore } from '../helpers/command-store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { countRawKeys, forgetLookups, Store } from '../helpers/store.js';
import { findOrgByName, getOrg, listOrgs, putOrg } from '../../src/model/records/org-records.js';

const at = Date.UTC(2030, 0, 1);

/** Three organisations made a minute apart, out of their names' order. */
function seed(run: (name: 'orgCreate', input: { principal: typeof kOperator; name: string }, now: number) => Org) {
  const beta = run('orgCreate', { principal: kOperator, name: 'Beta' }, at);
  const acme = run('orgCreate', { principal: kOperator, name: 'Acme Corp' }, at + 60_000);
  const zeta = run('orgCreate', { principal: kOperator, name: 'Zeta' }, at + 120_000);
  return { acme, beta, zeta };
}

t.test('a name is found and refused as people tell names apart', async (t) => {
  const { store, run, refused } = commandStore(t, 'flagwire-org-names-', at);
  const s = seed(run);
  t.equal(findOrgByName(store, 'Acme Corp')?.id, s.acme.id, 'by its name');
  t.equal(findOrgByName(store, '  aCME cORP ')?.id, s.acme.id, 'trimmed, without case');
  t.equal(findOrgByName(store, 'Acme'), undefined, 'another name is no match');
  t.equal(findOrgByName(store, 'Acme  Corp'), undefined, 'nor are blanks inside it');
  t.equal(findOrgByName(store, 'x'.repeat(600)), undefined, 'a name too long to be a key is read as absent');

  const err = refused('orgCreate', { principal: kOperator, name: ' ACME CORP' });
  t.equal(err.code, 'INVALID_REQUEST');
  t.match(err.message, `an organisation named "Acme Corp" already exists (${s.acme.id}); organisation names are unique, ignoring case`);
  t.equal(listOrgs(store).length, 3, 'the refused create wrote nothing');
  const acmeLabs = run('orgCreate', { principal: kOperator, name: 'Acme Labs' });
  t.equal(findOrgByName(store, 'acme labs')?.id, acmeLabs.id, 'a name that only starts alike is free');

  // Written again with another name (as a copy applies a changed record): filed under the new name only.
  store.transact((w) => putOrg(w, { ...getOrg(store, s.beta.id)!, name: 'Gamma' }));
  t.equal(findOrgByName(store, 'Beta'), undefined, 'the old name is free');
  t.equal(findOrgByName(store, 'gamma')?.id, s.beta.id, 'the new one taken');
  run('orgCreate', { principal: kOperator, name: 'beta' });
  t.match(refused('orgCreate', { principal: kOperator, name: 'GAMMA' }).message, `(${s.beta.id})`);
  t.equal(await countRawKeys(dirname(store.path), 'keyedIndexes', 'org'), 5, 'each organisation filed once');
});

t.test('a data file written before the lookup: read whole by a read-only open, filed when opened for writing', async (t) => {
  const dir = tempDir(t, 'flagwire-org-names-');
  const made = Store.open(dir);
  const s = made.transact((w) => seed((name, input, now) => runCommand(w, name, input, now)));
  await made.close();
  t.ok(await forgetLookups(dir, 'org'), 'this Flagwire names the organisation lookup');

  const reader = Store.open(dir, { readOnly: true });
  t.equal(findOrgByName(reader, 'acme corp')?.id, s.acme.id, 'found by reading every organisation');
  t.equal(findOrgByName(reader, 'Nobody'), undefined);
  t.equal(findOrgByName(reader, 'x'.repeat(600)), undefined, 'a name too long to be a key, by reading every organisation too');
  await reader.close();

  const store = Store.open(dir);
  t.teardown(() => store.close());
  t.equal(findOrgByName(store, 'ZETA')?.id, s.zeta.id, 'the lookup built');
  t.throws(
    () => store.transact((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'zeta ' }, at)),
    { message: `an organisation named "Zeta" already exists (${s.zeta.id}); organisation names are unique, ignoring case` },
    'and the name rule reads it',
  );
  t.equal(await countRawKeys(dir, 'keyedIndexes', 'org'), 3, 'each organisation filed once, under its name');
});

t.test("a node's copy files the organisations it copies and applies under their names", async (t) => {
  const source = Store.open(tempDir(t, 'flagwire-org-names-'));
  t.teardown(() => source.close());
  const s = source.transact((w) => seed((name, input, now) => runCommand(w, name, input, now)));
  const copy = Store.open(tempDir(t, 'flagwire-org-names-'));
  t.teardown(() => copy.close());
  copy.replaceAll('db-1', 0, source.exportRecords());
  t.equal(findOrgByName(copy, 'ACME CORP')?.id, s.acme.id, 'a full copy');

  const { settled, changes } = source.rehearse([
    (w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Delta' }, at + 3_600_000),
  ]);
  const delta = settled[0]!.ok ? (settled[0]!.value as Org).id : t.fail('the create failed');
  copy.applyRevisions([{ revision: 1, changes }]);
  t.equal(findOrgByName(copy, 'delta')?.id, delta, 'a change applied');
  t.equal(findOrgByName(copy, 'beta')?.id, s.beta.id);
});
