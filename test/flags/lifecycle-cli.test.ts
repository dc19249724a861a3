// A flag's lifecycle at the command line, run as users run it (issue 99; docs/cli.md): `flag create`
// with --type, --owner and --lifetime; `flag lifecycle` shows and changes them ("" returns one to its
// default); `flag archive` takes the flag out of `flag list` and into `flag lifecycles --stage archived`;
// `flag restore` brings it back; an archived flag's name is refused to `flag create`.
import t from 'tap';
import { cli, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();

t.test('create, show, change, archive, list, restore', async (t) => {
  const made = await ok(t, dataDir, [
    'flag',
    'create',
    ids.single,
    '--name',
    'cli-life',
    '--type',
    'experiment',
    '--owner',
    'team-growth',
    '--lifetime',
    '14',
  ]);
  t.match(made, { type: 'experiment', owner: 'team-growth', lifetimeDays: 14 });
  t.match(await ok(t, dataDir, ['flag', 'lifecycle', made.id]), {
    type: 'experiment',
    owner: 'team-growth',
    lifetimeDays: 14,
    stage: 'new',
  });
  t.match(await ok(t, dataDir, ['flag', 'lifecycle', made.id, '--owner', '', '--lifetime', 'permanent']), {
    owner: null,
    lifetimeDays: 'permanent',
  });
  t.match(await ok(t, dataDir, ['flag', 'lifecycle', made.id, '--lifetime', '']), { lifetimeDays: 40 }, "back to the type's default");
  const bad = await cli(dataDir, ['flag', 'create', ids.single, '--name', 'cli-bad', '--type', 'forever']);
  t.equal(bad.code, 1, 'a type Flagwire does not know is refused');

  const archived = await ok(t, dataDir, ['flag', 'archive', made.id]);
  t.type(archived.archivedAt, 'number');
  const listed = await ok(t, dataDir, ['flag', 'list', ids.single]);
  t.notOk(
    listed.flags.some((f: { id: string }) => f.id === made.id),
    'flag list leaves it out',
  );
  const lifecycles = await ok(t, dataDir, ['flag', 'lifecycles', ids.single, '--stage', 'archived']);
  t.same(
    lifecycles.flags.map((f: { id: string }) => f.id),
    [made.id],
  );
  const reuse = await cli(dataDir, ['flag', 'create', ids.single, '--name', 'cli-life']);
  t.equal(reuse.code, 1);
  t.match(reuse.stdout + reuse.stderr, /archived/);
  const human = await cli(dataDir, ['flag', 'lifecycles', ids.single], { json: false });
  t.match(human.stdout, /^stage +name +type +owner +lifetime/m);
  t.match(human.stdout, /archived +cli-life +experiment/);

  const restored = await ok(t, dataDir, ['flag', 'restore', made.id]);
  t.notOk('archivedAt' in restored);
  t.ok((await ok(t, dataDir, ['flag', 'list', ids.single])).flags.some((f: { id: string }) => f.id === made.id));
});
