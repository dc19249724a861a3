// A flag's version (src/flags/flag-version.ts) and its If-Match precondition, in process: what moves the
// tag and what does not, every flag edit refused (and nothing written) for a tag of another version, and
// what the precondition means where the change is held as a change request (docs/approvals.md).
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { flagEtag } from '../../src/flags/flag-version.js';
import { entityTagList, matchesIfMatch } from '../../src/http/entity-tags.js';
import type { Flag } from '../../src/model/flags.js';
import { guardedWorld, held } from '../helpers/guarded-world.js';
import { refusedCommand } from '../helpers/refused.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

t.test('If-Match lists: strong comparison, `*`, and the list as sent', async (t) => {
  t.same(entityTagList(''), []);
  t.same(entityTagList(' "a" ,W/"b",, *'), ['"a"', 'W/"b"', '*']);
  t.ok(matchesIfMatch('"a"', '"a"'));
  t.ok(matchesIfMatch('"x", "a"', '"a"'), 'one of a list');
  t.ok(matchesIfMatch('*', '"a"'), '* matches the flag that exists');
  t.notOk(matchesIfMatch('W/"a"', '"a"'), 'a weak tag never matches strongly (RFC 9110 §13.1.1)');
  t.notOk(matchesIfMatch('"b"', '"a"'));
  t.notOk(matchesIfMatch('a', '"a"'), 'an unquoted value is no tag of ours');
});

t.test("the tag moves exactly when the stored flag does: any environment's state, a setting, never usage", async (t) => {
  const world = buildWorld(scratchDir('flag-version'));
  const { ids } = world;
  const tag = () => {
    world.store.resetReadTxn();
    return flagEtag(getFlag(world.store, ids.groupFlag) as Flag);
  };
  const first = tag();
  t.match(first, /^"flag-[0-9a-f]{16}"$/, 'strong, quoted, opaque');
  t.equal(tag(), first, 'the same flag reads the same tag');

  const noop = world.run('flagPatch', { flagId: ids.groupFlag, env: 'staging', patch: {}, principal: kOperator });
  t.equal(noop.changed, false);
  t.equal(tag(), first, 'a patch that changes nothing leaves the version');

  world.run('recordUsage', { counts: [{ flagId: ids.groupFlag, environment: '', evaluations: 3, lastEvaluatedAt: Date.now() }] });
  t.equal(tag(), first, 'evaluations counted are no change of the flag');

  const staging = world.run('flagPatch', { flagId: ids.groupFlag, env: 'staging', patch: { trafficPercentage: 33 }, principal: kOperator });
  t.equal(staging.changed, true);
  const second = tag();
  t.not(second, first, "one environment's state moves the flag's one tag");
  t.equal(flagEtag(staging.flag), second, "the writer's answer names the stored version");

  world.run('flagDescribe', { flagId: ids.groupFlag, text: 'now described', principal: kOperator });
  t.not(tag(), second, 'a console setting moves it too');
});

t.test('every flag edit with a tag of another version is refused, and writes nothing', async (t) => {
  const world = buildWorld(scratchDir('flag-version-refused'));
  const { ids } = world;
  world.store.resetReadTxn();
  const old = flagEtag(getFlag(world.store, ids.groupFlag) as Flag);
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'production', patch: { trafficPercentage: 5 }, principal: kOperator });
  world.store.resetReadTxn();
  const now = flagEtag(getFlag(world.store, ids.groupFlag) as Flag);

  const stale = { flagId: ids.groupFlag, principal: kOperator, ifMatch: old };
  const detail = refusedCommand(t, world, 'PRECONDITION_FAILED', () =>
    // Another environment than the one changed: the tag names the whole flag (docs/decisions.md).
    world.run('flagPatch', { ...stale, env: 'staging', patch: { enabled: true } }),
  );
  t.match(detail, /has changed since you read it/);
  t.match(detail, /Nothing was applied/);
  t.ok(detail.includes(now), 'names the version it is at now');
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => world.run('flagRename', { ...stale, name: 'renamed' }));
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => world.run('flagDescribe', { ...stale, text: 'x' }));
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => world.run('flagTags', { ...stale, tags: ['x'] }));
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => world.run('flagCohorts', { ...stale, cohorts: ['x'] }));
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => world.run('flagDelete', stale));
  refusedCommand(t, world, 'PRECONDITION_FAILED', () =>
    world.run('flagPatch', { ...stale, env: 'staging', patch: { enabled: true }, ifMatch: `W/${now}` }),
  );

  // The current tag, or `*`, or none at all: applied.
  t.equal(world.run('flagPatch', { ...stale, env: 'staging', patch: { trafficPercentage: 61 }, ifMatch: now }).changed, true);
  t.equal(world.run('flagTags', { ...stale, tags: ['y'], ifMatch: '*' }).tags[0], 'y');
  t.equal(world.run('flagTags', { flagId: ids.groupFlag, principal: kOperator, tags: ['z'] }).tags[0], 'z');
});

t.test('an unknown flag is 404 before any tag is compared', async (t) => {
  const world = buildWorld(scratchDir('flag-version-404'));
  refusedCommand(t, world, 'NOT_FOUND', () =>
    world.run('flagPatch', { flagId: 'flg_nope', env: null, patch: { enabled: true }, principal: kOperator, ifMatch: '"flag-0"' }),
  );
});

t.test('a held change: the tag is checked when it is asked; the request opened leaves the version', async (t) => {
  const { world, ids, t0, editor } = guardedWorld('flag-version-guarded', 1);
  world.store.resetReadTxn();
  const old = flagEtag(getFlag(world.store, ids.groupFlag) as Flag);
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'staging', patch: { trafficPercentage: 7 }, principal: editor }, t0);
  world.store.resetReadTxn();
  const now = flagEtag(getFlag(world.store, ids.groupFlag) as Flag);

  const ask = (ifMatch: string) =>
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', patch: { enabled: true }, principal: editor, ifMatch }, t0 + 1);
  // A stale tag opens no request: refusedCommand checks that no record changed.
  refusedCommand(t, world, 'PRECONDITION_FAILED', () => ask(old));
  const requestId = held(ask(now));
  t.match(requestId, /^chr_/, 'a current tag: the change is held as a request');
  world.store.resetReadTxn();
  t.equal(flagEtag(getFlag(world.store, ids.groupFlag) as Flag), now, 'nothing applied: the version is the same');
});
