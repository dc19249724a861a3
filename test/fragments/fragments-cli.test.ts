// `flagwire fragment list|create|update|delete` (issue 47), run as users run it: made, listed, changed
// and deleted with the Management API's rules and words; a flag made with {"$ref": NAME} at the command
// line; refusals (a bad rule, a viewer, a fragment in use, an unknown one) exit 1 with the API's
// {error, detail} and change nothing in the store; each change audited as the user named.
import t from 'tap';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();

const kRule = '{"in": [{"var": "country"}, ["NL", "BE"]]}';

t.test('made, listed, used by a flag, changed and deleted, each audited as the user named', async (t) => {
  const made = await ok(t, dataDir, ['fragment', 'create', ids.single, 'benelux', '--rule', kRule, '--as', ids.editor, '--json']);
  t.match(made, { name: 'benelux', rule: { in: [{ var: 'country' }, ['NL', 'BE']] } });
  const listed = await cli(dataDir, ['fragment', 'list', ids.single], { json: false });
  t.match(listed.stdout, /NAME\s+UPDATED\s+RULE\nbenelux\s+.*\{"in":\[\{"var":"country"\},\["NL","BE"\]\]\}/);
  const flag = await ok(t, dataDir, ['flag', 'create', ids.single, '--name', 'eu-banner', '--json']);
  const variants = await ok(t, dataDir, [
    'flag',
    'variants',
    flag.id,
    '--variants',
    '{"on": true, "off": false}',
    '--default-variant',
    'off',
    '--targeting',
    '{"if": [{"$ref": "benelux"}, "on", "off"]}',
    '--json',
  ]);
  t.same(variants.flag.targeting, { if: [{ $ref: 'benelux' }, 'on', 'off'] });
  const changed = await ok(t, dataDir, [
    'fragment',
    'update',
    ids.single,
    'benelux',
    '--rule',
    '{"in": [{"var": "country"}, ["NL"]]}',
    '--json',
  ]);
  t.same(changed.rule, { in: [{ var: 'country' }, ['NL']] });
  await expectAllRefused(t, dataDir, [
    [
      ['fragment', 'delete', ids.single, 'benelux', '--json'],
      { error: 'Invalid request', detail: /^shared fragment "benelux" is used by flag "eu-banner": change their rules first/ },
    ],
    [
      ['fragment', 'create', ids.single, 'x', '--rule', '{"nope": [1]}', '--json'],
      { error: 'Invalid request', detail: /rule: unknown operator "nope"/ },
    ],
    [['fragment', 'create', ids.single, 'x', '--rule', kRule, '--as', ids.viewer, '--json'], { error: 'Forbidden' }],
    [['fragment', 'update', ids.single, 'nope', '--rule', kRule, '--json'], { error: 'Not found' }],
    [['fragment', 'update', ids.singleB, 'benelux', '--rule', kRule, '--json'], { error: 'Not found' }],
    [
      ['flag', 'variants', flag.id, '--targeting', '{"if": [{"$ref": "nope"}, "on", "off"]}', '--json'],
      {
        error: 'Invalid request',
        detail: /"targeting\.if\[0\]": \$ref "nope" names no shared fragment of this project \(known: "benelux"\)/,
      },
    ],
  ]);
  await ok(t, dataDir, ['flag', 'variants', flag.id, '--targeting', '{}', '--json']);
  const deleted = await cli(dataDir, ['fragment', 'delete', ids.single, 'benelux', '--as', ids.editor], { json: false });
  t.equal(deleted.code, 0);
  t.match(deleted.stdout, 'Deleted shared fragment benelux.');
  t.match((await ok(t, dataDir, ['fragment', 'list', ids.single, '--json'])).fragments, []);
  const { entries } = await ok(t, dataDir, ['audit', ids.single, '--json']);
  t.match(
    entries.filter((e: { action: string }) => e.action.startsWith('fragment.')),
    [
      { action: 'fragment.delete', actor: `user:${ids.editor}` },
      { action: 'fragment.update', actor: 'console' },
      { action: 'fragment.create', actor: `user:${ids.editor}` },
    ],
  );
});
