// `flagwire events settings|export` (issue 58; docs/cli.md: Events), run as users run it: the raw-event
// retention shown and changed (audited as the person named; an editor, a bad value refused, nothing
// changed), and a project environment's raw events written to a file as JSON lines and as Parquet,
// read from the data dir's tally file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { TallyFile } from '../../src/events/tally/tally-file.js';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const outDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();

t.test('the retention shown, changed as the person named and audited; refusals change nothing', async (t) => {
  t.strictSame(await ok(t, dataDir, ['events', 'settings', ids.multi, '--json']), { rawEventRetentionDays: null });
  const none = await cli(dataDir, ['events', 'settings', ids.multi], { json: false });
  t.match(none.stdout, /Raw events are not kept/);
  await expectAllRefused(t, dataDir, [
    [['events', 'settings', ids.multi, '--raw-retention-days', 'forever', '--json'], { error: 'Invalid request', detail: /days or off/ }],
    [['events', 'settings', ids.multi, '--raw-retention-days', '0', '--json'], { error: 'Invalid request', detail: /1 to 400/ }],
    [['events', 'settings', ids.multi, '--raw-retention-days', '7', '--as', ids.editor, '--json'], { error: 'Forbidden' }],
  ]);
  t.strictSame(await ok(t, dataDir, ['events', 'settings', ids.multi, '--raw-retention-days', '7', '--as', ids.admin, '--json']), {
    rawEventRetentionDays: 7,
  });
  const audit = await ok(t, dataDir, ['audit', ids.multi, '--limit', '1', '--json']);
  t.match(audit.entries[0], {
    action: 'events.settings',
    actor: `user:${ids.admin}`,
    changes: { rawEventRetentionDays: { before: null, after: 7 } },
  });
  t.strictSame(await ok(t, dataDir, ['events', 'settings', ids.multi, '--raw-retention-days', 'off', '--json']), {
    rawEventRetentionDays: null,
  });
});

t.test("an environment's raw events written to a file, as JSON lines and as Parquet", async (t) => {
  const empty = join(outDir, 'none.jsonl');
  t.match(await ok(t, dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--out', empty, '--json']), { bytes: 0 });
  const tally = TallyFile.open(dataDir);
  const now = Date.now();
  const event = (subject: string) => ({
    kind: 'track' as const,
    key: 'purchase',
    targetingKey: subject,
    variant: null,
    value: 2.5,
    details: null,
    timestamp: now,
  });
  await tally.transact((txn) => {
    txn.putRawEvents({ projectId: ids.multi, environment: 'staging' }, [event('ann'), event('bob')], now, 86_400_000);
    txn.putRawEvents({ projectId: ids.multi, environment: 'production' }, [event('cay')], now, 86_400_000);
  });
  await tally.close();
  const out = join(outDir, 'staging.jsonl');
  const written = await ok(t, dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--out', out, '--json']);
  const lines = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.match(lines, [event('ann'), event('bob')], "staging's two, in the order stored");
  t.equal(written.bytes, readFileSync(out).length);
  const parquet = join(outDir, 'staging.parquet');
  await ok(t, dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--format', 'parquet', '--out', parquet, '--json']);
  t.equal(readFileSync(parquet).subarray(0, 4).toString(), 'PAR1', 'a Parquet file');
  const later = await ok(t, dataDir, [
    'events',
    'export',
    ids.multi,
    '--env',
    'staging',
    '--from',
    String(now + 1),
    '--out',
    out,
    '--json',
  ]);
  t.equal(later.bytes, 0, 'none stored from --from on');
  const refused = await cli(dataDir, ['events', 'export', ids.multi, '--out', out, '--json']);
  t.equal(refused.code, 1);
  t.match(refused.json, { error: 'Invalid request', detail: /--env must name one of/ });
});

t.test('an export of a project that keeps no raw events says so and how to keep them; one that keeps them says nothing', async (t) => {
  const out = join(outDir, 'note.jsonl');
  const off = await cli(dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--out', out], { json: false });
  t.equal(off.code, 0, 'still exported: events kept before retention was turned off stay to their expiry');
  t.match(off.stdout, /^Wrote \d+ bytes of jsonl to /);
  t.match(off.stderr, new RegExp(`project ${ids.multi} keeps no raw events`));
  t.match(off.stderr, new RegExp(`flagwire events settings ${ids.multi} --raw-retention-days N`));
  const json = await cli(dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--out', out, '--json']);
  t.equal(json.code, 0);
  t.match(json.json, { out, format: 'jsonl' }, '--json: the same one object on stdout');
  t.match(json.stderr, /keeps no raw events/, '--json: the note on stderr');
  await ok(t, dataDir, ['events', 'settings', ids.multi, '--raw-retention-days', '7', '--json']);
  const kept = await cli(dataDir, ['events', 'export', ids.multi, '--env', 'staging', '--out', out], { json: false });
  t.equal(kept.code, 0);
  t.equal(kept.stderr, '', 'nothing to say while raw events are kept');
  await ok(t, dataDir, ['events', 'settings', ids.multi, '--raw-retention-days', 'off', '--json']);
});
