// A flag's precondition at the command line, run as users run it: `flag version` prints the version a
// GET's ETag names, and every flag edit with `--if-version` of another version is refused (Precondition
// failed, nothing written); with the current one, or without it, the edit is made.
import t from 'tap';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();

t.test('flag version, then edits naming it: refused once the flag changed, made while it has not', async (t) => {
  const first = await ok(t, dataDir, ['flag', 'version', ids.groupFlag, '--json']);
  t.equal(first.id, ids.groupFlag);
  t.match(first.etag, /^"flag-[0-9a-f]{16}"$/);
  const human = await cli(dataDir, ['flag', 'version', ids.groupFlag], { json: false });
  t.equal(human.stdout.trim(), first.etag, 'without --json, the tag alone: what a script captures');

  const tagged = await ok(t, dataDir, ['flag', 'tags', ids.groupFlag, 'beta', '--if-version', first.etag, '--json']);
  t.same(tagged.tags, ['beta'], 'the current version: made');
  const now = (await ok(t, dataDir, ['flag', 'version', ids.groupFlag, '--json'])).etag;
  t.not(now, first.etag, 'the edit moved the version');

  const stale = ['--if-version', first.etag];
  const refused = { error: 'Precondition failed', detail: /has changed since you read it.*Nothing was applied/ };
  await expectAllRefused(t, dataDir, [
    [['flag', 'rename', ids.groupFlag, 'renamed', ...stale], refused],
    [['flag', 'describe', ids.groupFlag, 'text', ...stale], refused],
    [['flag', 'tags', ids.groupFlag, 'gamma', ...stale], refused],
    [['flag', 'cohorts', ids.groupFlag, 'c1', ...stale], refused],
    [['flag', 'variants', ids.groupFlag, '--env', 'staging', '--variants', '{"a":"x","b":"y"}', ...stale], refused],
    [['flag', 'delete', ids.groupFlag, ...stale], refused],
  ]);

  t.same(
    (await ok(t, dataDir, ['flag', 'describe', ids.groupFlag, 'described', '--json'])).description,
    'described',
    'no --if-version: made as ever',
  );
});
