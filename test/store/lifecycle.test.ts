// Every kind that declares the kind its records hang off (KeyedKind.hangsOff), tested as it declares:
// deleting the record it hangs off deletes it with it (cascade), recorded as its own deletion before that
// one, or leaves it (keep). The scenarios below cover exactly the kinds declared: a kind that declares a
// lifecycle without one here fails this test (docs/architecture.md, "Adding a capability"). No kind of Flagwire's refuses a deletion yet: the test-only
// capability's drafts do (refuse). The layout refuses a declaration it cannot keep.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { kCapabilityList } from '../../src/capabilities.js';
import { kEnvironmentUsageRecords, kFlagRecords, kUsageRecords } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import { kRolloutRecords, kScheduleRecords } from '../../src/release-plans/records.js';
import type { KeyedKind } from '../../src/store/interfaces.js';
import { compositeKey, keyedRecords } from '../../src/store/record-kinds.js';
import { storeLayout } from '../../src/store/store-layout.js';
import { kDeliveryRecords, kWebhookRecords, listDeliveries } from '../../src/webhooks/records.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { kWidgetDraftRecords, kWidgetLayout } from '../helpers/widgets.js';
import { buildWorld, type World } from '../helpers/world.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { kFlagCommands } from '../../src/flags/command-table.js';

/** A record of the kind and the record of its parent kind it hangs off, made through the commands. */
interface Made {
  parent: { kind: KeyedKind<unknown>; value: unknown };
  key: string;
}

const at = Date.now();

const kScenarios: Readonly<Record<string, (world: World) => Made>> = {
  usage(world) {
    world.run('recordUsage', { counts: [{ flagId: world.ids.flag, environment: '', evaluations: 3, lastEvaluatedAt: at }] });
    return { parent: flagOf(world), key: world.ids.flag };
  },
  environmentUsage(world) {
    world.run('recordUsage', { counts: [{ flagId: world.ids.flag, environment: '', evaluations: 3, lastEvaluatedAt: at }] });
    return { parent: flagOf(world), key: compositeKey(world.ids.flag, '') };
  },
  schedule(world) {
    const made = world.run(
      'scheduleCreate',
      { principal: kOperator, flagId: world.ids.flag, env: null, body: { at: at + 3_600_000, patch: { enabled: false } } },
      at,
    );
    return { parent: flagOf(world), key: made.id };
  },
  rollout(world) {
    const steps = [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }];
    const made = world.run(
      'rolloutStart',
      { principal: kOperator, flagId: world.ids.flag, env: null, body: { steps }, guardMetrics: null },
      at,
    );
    return { parent: flagOf(world), key: made.id };
  },
  delivery(world) {
    const received = jsonBody(JSON.stringify({ url: 'https://hooks.example.com/x' }));
    const hook = world.run('webhookCreate', { principal: kOperator, projectId: world.ids.single, received }, at);
    world.run('flagPatch', { flagId: world.ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 40 } } as never, at);
    const [delivery] = listDeliveries(world.store, hook.id, 1);
    if (delivery === undefined) throw new Error('no delivery was queued');
    return {
      parent: { kind: kWebhookRecords as KeyedKind<unknown>, value: world.store.getKeyed(kWebhookRecords, hook.id) },
      key: delivery.id,
    };
  },
};

function flagOf(world: World): Made['parent'] {
  return { kind: kFlagRecords as KeyedKind<unknown>, value: world.store.getKeyed(kFlagRecords, world.ids.flag) };
}

const declared = kStoreLayout.kinds.filter((kind) => kind.hangsOff !== undefined);

t.strictSame(
  Object.keys(kScenarios).sort(),
  declared.map((kind) => kind.name).sort(),
  'a scenario for every kind that declares a lifecycle, and no other',
);
t.strictSame(
  Object.fromEntries(declared.map((kind) => [kind.name, kind.hangsOff])),
  {
    [kUsageRecords.name]: { kind: 'flag', via: null, onDelete: 'cascade' },
    [kEnvironmentUsageRecords.name]: { kind: 'flag', via: 'flag', onDelete: 'cascade' },
    [kScheduleRecords.name]: { kind: 'flag', via: 'flag', onDelete: 'keep' },
    [kRolloutRecords.name]: { kind: 'flag', via: 'flag', onDelete: 'keep' },
    [kDeliveryRecords.name]: { kind: 'webhook', via: 'history', onDelete: 'cascade' },
  },
  'what each declares (docs/architecture.md: Lifecycle)',
);

for (const kind of declared) {
  t.test(`${kind.name} hangs off ${kind.hangsOff!.kind}: ${kind.hangsOff!.onDelete}`, async (t) => {
    const world = buildWorld(tempDir(t, 'flagwire-lifecycle-'));
    t.teardown(() => world.store.close());
    const made = kScenarios[kind.name]!(world);
    t.ok(world.store.getKeyed(kind, made.key), 'made');

    // What the deletion records, in order (a copy applies them so).
    const { changes } = world.store.rehearse([(w) => w.deleteKeyed(made.parent.kind, made.parent.value)]);
    const removals = changes
      .map((change) => change.kind)
      .filter((name) => name === kind.removal?.name || name === made.parent.kind.removal!.name);

    world.store.transact((w) => w.deleteKeyed(made.parent.kind, made.parent.value));
    t.equal(
      world.store.getKeyed(made.parent.kind, made.parent.kind.key(made.parent.value)),
      undefined,
      'the record it hangs off is deleted',
    );
    if (kind.hangsOff!.onDelete === 'cascade') {
      t.equal(world.store.getKeyed(kind, made.key), undefined, 'deleted with it');
      t.strictSame(
        removals,
        [kind.removal!.name, made.parent.kind.removal!.name],
        'recorded as its own deletion, before the one it hangs off',
      );
    } else {
      t.ok(world.store.getKeyed(kind, made.key), 'kept');
      t.strictSame(removals, [made.parent.kind.removal!.name], 'nothing recorded of it');
    }
  });
}

t.test('a kind that refuses: the record it hangs off is not deleted while one hangs off it, and nothing changes', async (t) => {
  const dir = tempDir(t, 'flagwire-lifecycle-');
  buildWorld(dir).store.close();
  const store = LmdbStore.open(dir, { layout: kWidgetLayout });
  t.teardown(() => store.close());
  const flagId = store.transact((w) => w.listKeyed(kFlagRecords)[0]!.id);
  const draft = { id: 'd1', orgId: 'o', size: 1, flagId };
  store.transact((w) => w.putKeyed(kWidgetDraftRecords, draft));
  const flag = store.transact((w) => w.getKeyed(kFlagRecords, flagId))!;
  const revision = store.revision();
  t.throws(() => store.transact((w) => w.deleteKeyed(kFlagRecords, flag)), {
    code: 'INVALID_REQUEST',
    detail: 'widget drafts hang off this flag: delete them first',
  });
  t.throws(
    () => store.transact((w) => kFlagCommands.flagDelete.run(w, { flagId, principal: kOperator }, at)),
    { code: 'INVALID_REQUEST', detail: 'widget drafts hang off this flag: delete them first' },
    'the flag command is refused so',
  );
  t.ok(
    store.transact((w) => w.getKeyed(kFlagRecords, flagId)),
    'the flag stays',
  );
  t.equal(store.revision(), revision, 'nothing written');
  store.transact((w) => w.deleteKeyed(kWidgetDraftRecords, draft));
  store.transact((w) => w.deleteKeyed(kFlagRecords, flag));
  t.equal(
    store.transact((w) => w.getKeyed(kFlagRecords, flagId)),
    undefined,
    'once the draft is gone, the flag is deleted',
  );
});

t.test('the layout refuses a lifecycle it cannot keep', async (t) => {
  const thing = (hangsOff: KeyedKind<{ id: string }>['hangsOff'], deletedAs?: 'thingDeleted') =>
    keyedRecords<{ id: string }>()({ name: 'thing', database: 'things', relayed: false, key: (x) => x.id, hangsOff, deletedAs });
  const owner = (kind: KeyedKind<{ id: string }>) => [
    ...kCapabilityList,
    { name: 'things', databases: ['things'], records: [kind as never] },
  ];
  t.throws(
    () => storeLayout(owner(thing({ kind: 'nothing', via: null, onDelete: 'keep' }))),
    /hangs off nothing, which is no kind whose records are deleted/,
  );
  t.throws(
    () => storeLayout(owner(thing({ kind: 'schedule', via: null, onDelete: 'keep' }))),
    /hangs off schedule, which is no kind whose records are deleted/,
  );
  t.throws(() => storeLayout(owner(thing({ kind: 'flag', via: 'byFlag', onDelete: 'keep' }))), /via byFlag, a lookup it does not declare/);
  t.throws(() => storeLayout(owner(thing({ kind: 'flag', via: null, onDelete: 'cascade' }))), /deleted with flag but declares no deletion/);
  t.doesNotThrow(() => storeLayout(owner(thing({ kind: 'flag', via: null, onDelete: 'cascade' }, 'thingDeleted'))));
  t.throws(
    () => storeLayout(owner(thing({ kind: 'flag', via: null, onDelete: 'refuse', refusal: 'no' }))),
    /thing refuses deletions of flag but declares no deletion/,
  );
});
