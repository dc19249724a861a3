// A shared fragment's rule kept as its compact JSON text (issue 96, item 8; docs/decisions.md): the record
// and the audit entry hold the text, and every surface shows what it showed when they held the value. A
// record or an audit entry written before (the value itself, never migrated) reads the same: each surface
// is read with the text, then with the same record and entries in their old form, and compared.
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { ChangeRequest } from '../../src/approvals/records.js';
import { titleOf } from '../../src/approvals/request-title.js';
import { recordJson, streamRecord } from '../../src/audit-stream/record.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import {
  type Fragment,
  fragmentRule,
  fragmentRules,
  kFragmentRecords,
  projectFragments,
} from '../../src/flags/records/fragment-records.js';
import { flagdServing } from '../../src/flags/flagd-serving.js';
import { exportProject } from '../../src/flags-as-code/export.js';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { fragmentJson, fragmentView } from '../../src/fragments/fragment-commands.js';
import { type AuditEntry, auditChanges, auditJson, auditView } from '../../src/model/audit.js';
import { jsonBody } from '../../src/model/request-body.js';
import { getOrg } from '../../src/model/records/org-records.js';
import { getProject } from '../../src/model/records/project-records.js';
import { buildSnapshot } from '../../src/snapshots/build.js';
import { deliveryBody } from '../../src/webhooks/payload.js';
import type { Webhook } from '../../src/webhooks/webhook.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld, type World } from '../helpers/world.js';

const kPro = { in: [{ var: 'plan' }, ['pro', 'team', 'ünïcode "quoted"']] };
const kTeam = { '==': [{ var: 'plan' }, 'team'] };
const kNow = 1_800_000_000_000;

/** Project single with the fragment `paying` made, changed once, and used by a flag's rule. */
function world(t: Test): { w: World; flagId: string } {
  const w = buildWorld(tempDataDir());
  t.teardown(() => w.store.close());
  const body = (value: unknown) => jsonBody(JSON.stringify(value));
  w.run('fragmentCreate', { principal: kOperator, projectId: w.ids.single, received: body({ name: 'paying', rule: kTeam }) }, kNow);
  w.run('fragmentUpdate', { principal: kOperator, projectId: w.ids.single, name: 'paying', received: body({ rule: kPro }) }, kNow + 1);
  const flagId = w.run(
    'flagCreate',
    {
      principal: kOperator,
      projectId: w.ids.single,
      body: {
        name: 'tiered',
        enabled: true,
        trafficPercentage: 100,
        variants: { a: 'A', b: 'B' },
        defaultVariant: 'b',
        targeting: { if: [{ $ref: 'paying' }, 'a', 'b'] },
      },
    },
    kNow + 2,
  ).id;
  return { w, flagId };
}

function fragmentEntries(w: World): AuditEntry[] {
  w.store.resetReadTxn();
  return w.store.listAudit(w.ids.single, { limit: 50, before: null }).filter((e) => e.action.startsWith('fragment.'));
}

/** An audit entry as one written before the text held it: its fragment's rules as values. */
function oldEntry(entry: AuditEntry): AuditEntry {
  const [[field, change]] = Object.entries(entry.changes) as [[string, { before: unknown; after: unknown }]];
  const value = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  return { ...entry, changes: { [field]: { before: value(change.before), after: value(change.after) } } };
}

/** Every surface that shows the project's fragment or its audit entries, as text. */
function surfaces(w: World, flagId: string, entries: readonly AuditEntry[]): Record<string, string> {
  w.store.resetReadTxn();
  const project = getProject(w.store, w.ids.single)!;
  const org = getOrg(w.store, project.orgId!)!;
  const flag = getFlag(w.store, flagId)!;
  const record = projectFragments(w.store, project.id)!;
  const hook = (format: Webhook['format']) => ({ format }) as Webhook;
  return {
    view: JSON.stringify(record.fragments.map(fragmentView)),
    rules: JSON.stringify(fragmentRules(record)),
    exportFlagd: fileText(exportProject(w.store, project, { format: 'flagd', env: null }, 'api', kNow)),
    exportFlagwire: fileText(exportProject(w.store, project, { format: 'flagwire', env: null }, 'api', kNow)),
    flagdSync: JSON.stringify(flagdServing(w.store, flag, project, org, kNow)),
    // The store's revision left out: writing the record in its old form moves it.
    evaluation: JSON.stringify({ ...buildSnapshot(w.store, project, null, org, kNow), revision: 0 }),
    audit: JSON.stringify(entries.map(auditView)),
    auditChanges: JSON.stringify(entries.map((e) => auditChanges(e))),
    auditJson: entries.map(auditJson).join('\n'),
    webhook: entries.map((e) => deliveryBody(hook('standard'), e, undefined, undefined, project)).join('\n'),
    slack: entries.map((e) => deliveryBody(hook('slack'), e, undefined, undefined, project)).join('\n'),
    auditStream: entries.map((e) => recordJson(streamRecord(e, 'src', 7, project.orgId))).join('\n'),
    // A change request holding these entries, titled in the log's words.
    requestTitle: titleOf(w.store, { projectId: project.id, audit: entries, changes: [] } as unknown as ChangeRequest),
  };
}

t.test('the rule is kept as its JSON text, in the record and in the audit entry', async (t) => {
  const { w } = world(t);
  const [fragment] = projectFragments(w.store, w.ids.single)!.fragments;
  t.equal(fragment!.rule, JSON.stringify(kPro), 'the record holds the compact JSON');
  t.same(fragmentRule(fragment!), kPro);
  t.equal(fragmentRule(fragment!), fragmentRule(fragment!), 'parsed once per record read');
  const [update, create] = fragmentEntries(w);
  t.same(update!.changes, { 'fragments.paying': { before: JSON.stringify(kTeam), after: JSON.stringify(kPro) } });
  t.same(create!.changes, { 'fragments.paying': { before: null, after: JSON.stringify(kTeam) } });
  t.same(auditChanges(update!), { 'fragments.paying': { before: kTeam, after: kPro } }, 'read as the values');
  t.equal(fragmentJson(fragment!), JSON.stringify(fragmentView(fragment!)), "the change's answer: the view's bytes");
});

t.test('a record and audit entries written before (the rule as a value) read the same on every surface', async (t) => {
  const { w, flagId } = world(t);
  const entries = fragmentEntries(w);
  const asText = surfaces(w, flagId, entries);
  t.same(JSON.parse(asText.view), [{ name: 'paying', rule: kPro, createdAt: kNow, updatedAt: kNow + 1 }]);
  t.same(JSON.parse(asText.exportFlagd).$evaluators, { paying: kPro }, 'the rule in the export');
  t.match(JSON.parse(asText.webhook.split('\n')[0]!), {
    type: 'fragment.update',
    data: { audit: { changes: { 'fragments.paying': { before: kTeam, after: kPro } } }, flag: null },
  });

  const record = projectFragments(w.store, w.ids.single)!;
  const old: Fragment[] = record.fragments.map((f) => ({ ...f, rule: fragmentRule(f) }));
  w.store.transact((tx) => tx.putKeyed(kFragmentRecords, { ...record, fragments: old }));
  t.same(typeof projectFragments(w.store, w.ids.single)!.fragments[0]!.rule, 'object', 'the record now holds the value');
  const asValues = surfaces(w, flagId, entries.map(oldEntry));
  for (const surface of Object.keys(asText)) t.equal(asValues[surface], asText[surface], surface);
  t.equal(fragmentJson(old[0]!), JSON.stringify(fragmentView(old[0]!)), "an old record's answer");
  t.equal(auditJson(oldEntry(entries[0]!)), JSON.stringify(oldEntry(entries[0]!)), "an old entry's JSON is JSON.stringify's");
});
