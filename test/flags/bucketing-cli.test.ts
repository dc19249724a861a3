// A flag's bucketing (issue 44) at the command line, run as users run it: `flag create --bucketing`,
// `flag show` and `flag list` naming it for a fractional flag only (a modulo flag's output as before),
// and `flags import`'s `x-flagwire-bucketing`: a new flag is made with it, an existing flag's may be
// repeated, never changed (refused whole, nothing written).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();
const files = tempDir(t, 'flagwire-bucketing-');

function file(name: string, document: unknown): string {
  const path = join(files, name);
  writeFileSync(path, JSON.stringify(document, null, 2));
  return path;
}

const flagdFlag = (extra: Record<string, unknown> = {}) => ({
  state: 'ENABLED',
  variants: { on: true, off: false },
  defaultVariant: 'on',
  ...extra,
});

t.test('flag create --bucketing fractional: shown by show and list; modulo output unchanged', async (t) => {
  const frac = await ok(t, dataDir, ['flag', 'create', ids.single, '--name', 'cli-frac', '--bucketing', 'fractional', '--json']);
  t.equal(frac.bucketing, 'fractional');
  const mod = await ok(t, dataDir, ['flag', 'create', ids.single, '--name', 'cli-mod', '--bucketing', 'modulo', '--json']);
  t.notOk(Object.hasOwn(mod, 'bucketing'), "modulo is the field's absence");
  const group = await ok(t, dataDir, ['flag', 'create', ids.multi, '--name', 'cli-g-frac', '--bucketing', 'fractional', '--json']);
  t.equal(group.bucketing, 'fractional', 'a group flag too');

  const shown = await cli(dataDir, ['flag', 'show', frac.id], { json: false });
  t.match(shown.stdout, /^kind +flag\nbucketing +fractional \(flagd's fractional point; fixed when the flag was made\)\ndescription/m);
  const modShown = await cli(dataDir, ['flag', 'show', mod.id], { json: false });
  t.notMatch(modShown.stdout, /bucketing/, 'a modulo flag prints no bucketing line');
  t.match(modShown.stdout, /^kind +flag\ndescription/m);
  const renamed = await cli(dataDir, ['flag', 'rename', frac.id, 'cli-frac-2'], { json: false });
  t.match(renamed.stdout, /^bucketing +fractional/m, 'the console edits print it too');

  const list = await cli(dataDir, ['flag', 'list', ids.single], { json: false });
  const row = (name: string) => list.stdout.split('\n').find((line) => line.includes(` ${name} `)) ?? '';
  t.match(row('cli-frac-2'), / flag \(fractional\) /);
  t.match(row('cli-mod'), / flag {2}/);
  t.notMatch(row('cli-mod'), /fractional/);
  const listed = await ok(t, dataDir, ['flag', 'list', ids.single, '--json']);
  t.same(
    listed.flags.filter((f: { bucketing?: string }) => f.bucketing !== undefined).map((f: { name: string }) => f.name),
    ['cli-frac-2'],
  );

  await expectAllRefused(t, dataDir, [
    [
      ['flag', 'create', ids.single, '--name', 'cli-bad', '--bucketing', 'random', '--json'],
      { error: 'Invalid request', detail: /^bucketing must be "modulo" \(the default\) or "fractional"$/ },
    ],
  ]);
});

t.test('flags import: x-flagwire-bucketing makes a new flag so; an existing one may not change', async (t) => {
  const made = await ok(t, dataDir, [
    'flags',
    'import',
    ids.single,
    '--file',
    file('made.json', { flags: { 'imp-frac': flagdFlag({ 'x-flagwire-bucketing': 'fractional' }), 'imp-mod': flagdFlag() } }),
    '--json',
  ]);
  const id = (key: string) => made.flags.find((f: { key: string }) => f.key === key).id;
  t.equal((await ok(t, dataDir, ['flag', 'show', id('imp-frac'), '--json'])).bucketing, 'fractional');
  t.notOk(Object.hasOwn(await ok(t, dataDir, ['flag', 'show', id('imp-mod'), '--json']), 'bucketing'));

  const again = await ok(t, dataDir, [
    'flags',
    'import',
    ids.single,
    '--file',
    file('same.json', {
      flags: {
        'imp-frac': flagdFlag({ 'x-flagwire-bucketing': 'fractional' }),
        'imp-mod': flagdFlag({ 'x-flagwire-bucketing': 'modulo' }),
      },
    }),
    '--json',
  ]);
  t.same(
    again.flags.map((f: { outcome: string }) => f.outcome),
    ['unchanged', 'unchanged'],
    'the same bucketing is accepted',
  );
  const omitted = await ok(t, dataDir, [
    'flags',
    'import',
    ids.single,
    '--file',
    file('omitted.json', { flags: { 'imp-frac': flagdFlag() } }),
    '--json',
  ]);
  t.same(omitted.flags[0].outcome, 'unchanged', "a file without the key keeps the flag's, as it keeps its percentage");

  await expectAllRefused(t, dataDir, [
    [
      [
        'flags',
        'import',
        ids.single,
        '--file',
        file('change.json', {
          flags: {
            'imp-new': flagdFlag(),
            'imp-mod': flagdFlag({ 'x-flagwire-bucketing': 'fractional' }),
            'imp-frac': flagdFlag({ 'x-flagwire-bucketing': 'modulo' }),
          },
        }),
        '--json',
      ],
      {
        error: 'Invalid request',
        detail:
          /^The file was not imported, nothing changed: .*flags\.imp-mod\.x-flagwire-bucketing: the flag's bucketing is "modulo" and cannot become "fractional": a flag's bucketing is fixed when the flag is made, since changing it would move users between buckets.*flags\.imp-frac\.x-flagwire-bucketing: the flag's bucketing is "fractional" and cannot become "modulo"/,
      },
    ],
    [
      [
        'flags',
        'import',
        ids.single,
        '--file',
        file('bad.json', { flags: { 'imp-x': flagdFlag({ 'x-flagwire-bucketing': 'hash' }) } }),
        '--json',
      ],
      { error: 'Invalid request', detail: /flags\.imp-x\.x-flagwire-bucketing: must be "modulo" \(the default\) or "fractional"/ },
    ],
  ]);
});
