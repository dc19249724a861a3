// Experiments in a flag file at the command line (issue 59, item 1; docs/flags-as-code.md: Experiments),
// as a user runs it on a data directory: an exported file given an experiment and its flag state's key
// plans it (exit 2, `+ experiment`, `running: true`), applies it (`experiment show` says running), exports
// it back (planned again: exit 0); a change to its weights while it runs is refused naming the place,
// nothing changed; dropping the key and changing the weights in one file stops it, then changes it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { cli, expectRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const project = world.ids.single;
await world.store.close();
const files = tempDir(t, 'flagwire-fac-experiments-');
const key = 'checkout-2026';

const arms = (off: number, on: number) => [
  { variant: 'off', weight: off },
  { variant: 'on', weight: on },
];
const declared = (off: number, on: number) => ({
  [key]: {
    flag: 'checkout',
    variants: arms(off, on),
    control: 'off',
    metrics: [{ metric: 'purchase', kind: 'conversion' }],
    primaryMetric: 'purchase',
    plannedSubjects: 10_000,
  },
});

async function exported(): Promise<{ text: string; file: Record<string, any> }> {
  const r = await cli(dataDir, ['export', project], { json: false });
  t.equal(r.code, 0, `export: exit 0 ${r.stderr}`);
  return { text: r.stdout, file: JSON.parse(r.stdout) };
}

function saved(name: string, document: unknown): string {
  const path = join(files, name);
  writeFileSync(path, typeof document === 'string' ? document : fileText(document));
  return path;
}

const show = () => ok(t, dataDir, ['experiment', 'show', project, key]);

t.test('declared with its flag state naming it: planned, applied (running), exported back, planned to nothing', async (t) => {
  const { file } = await exported();
  file.flags.checkout.experiment = key;
  file.experiments = declared(50, 50);
  const path = saved('declared.json', file);

  const planned = await cli(dataDir, ['plan', project, '--file', path], { json: false });
  t.equal(planned.code, 2, 'a change: exit 2');
  t.match(planned.stdout, `~ flag checkout\n    experiment: null -> "${key}"\n`);
  t.match(planned.stdout, `+ experiment ${key}\n    flag: "checkout"\n`);
  t.match(planned.stdout, '    running: true\n');
  t.match(planned.stdout, '1 to create, 1 to change, 0 to delete.');

  const applied = await cli(dataDir, ['apply', project, '--file', path], { json: false });
  t.equal(applied.code, 0, applied.stderr);
  t.match(applied.stdout, /1 created, 1 changed, 0 deleted/);
  t.match(await show(), { key, status: 'running', variants: arms(50, 50), plannedSubjects: 10_000, alpha: 0.05 });

  const back = await exported();
  t.same(back.file.experiments, { [key]: { ...declared(50, 50)[key], alpha: 0.05 } }, 'exported back');
  const again = await cli(dataDir, ['plan', project, '--file', saved('back.json', back.text)], { json: false });
  t.equal(again.code, 0, 'the export plans to nothing: exit 0');
  t.match(again.stdout, /^No changes/);
});

t.test('while it runs, a change to its weights is refused naming the place, and nothing changes', async (t) => {
  const { file } = await exported();
  file.experiments = declared(1, 3);
  await expectRefused(t, dataDir, ['apply', project, '--file', saved('weights.json', file), '--json'], {
    error: 'Invalid request',
    detail: new RegExp(`^The file cannot be applied, nothing changed: experiments\\.${key}: Experiment "${key}" is running`),
  });
  t.match(await show(), { status: 'running', variants: arms(50, 50) });
});

t.test('the key dropped and the weights changed in one file: stopped, then changed', async (t) => {
  const { file } = await exported();
  delete file.flags.checkout.experiment;
  file.experiments = declared(1, 3);
  const path = saved('stopped.json', file);
  const planned = await cli(dataDir, ['plan', project, '--file', path], { json: false });
  t.equal(planned.code, 2);
  t.match(
    planned.stdout,
    `~ experiment ${key}\n    variants: ${JSON.stringify(arms(50, 50))} -> ${JSON.stringify(arms(1, 3))}\n    running: true -> false\n`,
  );
  await ok(t, dataDir, ['apply', project, '--file', path]);
  t.match(await show(), { status: 'stopped', variants: arms(1, 3) });
  const flag = await ok(t, dataDir, ['flag', 'show', world.ids.flag]);
  t.equal(flag.experiment, undefined, 'its flag carries no key');
});
