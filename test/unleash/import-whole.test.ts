// `flagwire import unleash --file` (issue 96, item 13) with export files whose parts do not fit together:
// a strategy, an environment entry, a tag or a dependency list naming a feature the file does not list,
// a feature listed twice, a feature of two projects: each refuses the whole import, naming the feature,
// planned or applied, and writes nothing. A child exported without its parent, or whose parent is not
// carried, is refused by name (Unleash answers it as its parent allows; without the parent Flagwire would
// answer off): --apply writes nothing, --apply --skip-refused leaves it out with its parent.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli, expectRefused, type TestContext } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dir = scratchDir('flagwire-unleash-whole-');
// The export files beside the data directory: Flagwire refuses a data directory holding files not its own.
const files = scratchDir('flagwire-unleash-whole-exports-');
const world = buildWorld(dir);
const { orgB } = world.ids;
await world.store.close();

const feature = (name: string, project = 'web') => ({ name, project, description: '', type: 'release', stale: false, archived: false });
const strategy = (featureName: string, name = 'default') => ({ name, featureName, parameters: {}, constraints: [], segments: [] });
const environment = (featureName: string, enabled = true) => ({ featureName, environment: 'production', enabled, variants: [] });

interface Parts {
  features: object[];
  featureStrategies: object[];
  featureEnvironments: object[];
  featureTags?: object[];
  dependencies?: object[];
}
let written = 0;
const exportFile = (parts: Parts) => {
  const path = join(files, `export-${++written}.json`);
  writeFileSync(path, JSON.stringify({ tagTypes: [{ name: 'simple' }], ...parts }));
  return path;
};
const args = (...paths: string[]) => ['import', 'unleash', '--org', orgB, ...paths.flatMap((p) => ['--file', p])];
const kWhole: Parts = {
  features: [feature('banner')],
  featureStrategies: [strategy('banner')],
  featureEnvironments: [environment('banner')],
};

/** Planned and applied, the import is refused with `detail`, and the store is unchanged. */
async function refusedWhole(t: TestContext, paths: string[], detail: RegExp): Promise<void> {
  await expectRefused(t, dir, args(...paths), { error: 'Invalid request', detail });
  await expectRefused(t, dir, [...args(...paths), '--apply'], { error: 'Invalid request', detail });
  await expectRefused(t, dir, [...args(...paths), '--apply', '--skip-refused'], { error: 'Invalid request', detail });
}

t.test('a strategy naming a feature the file does not list: refused, nothing written', async (t) => {
  const path = exportFile({ ...kWhole, featureStrategies: [strategy('banner'), strategy('ghost')] });
  await refusedWhole(
    t,
    [path],
    /does not fit together, so nothing is imported: featureStrategies\[1\] names feature "ghost", which features does not list/,
  );
});

t.test('an environment entry naming a feature the file does not list: refused, nothing written', async (t) => {
  const path = exportFile({ ...kWhole, featureEnvironments: [environment('banner'), environment('ghost')] });
  await refusedWhole(t, [path], /featureEnvironments\[1\] names feature "ghost", which features does not list/);
});

t.test('a tag or a dependency list naming a feature the file does not list: refused, nothing written', async (t) => {
  const tag = exportFile({ ...kWhole, featureTags: [{ featureName: 'ghost', tagType: 'simple', tagValue: 'x' }] });
  await refusedWhole(t, [tag], /featureTags\[0\] names feature "ghost"/);
  const dependency = exportFile({ ...kWhole, dependencies: [{ feature: 'ghost', dependencies: [{ feature: 'banner' }] }] });
  await refusedWhole(t, [dependency], /dependencies\[0\] names feature "ghost"/);
});

t.test('a feature listed twice: refused, nothing written', async (t) => {
  const twice = exportFile({ ...kWhole, features: [feature('banner'), { ...feature('banner'), description: 'the second copy' }] });
  await refusedWhole(t, [twice], /feature "banner" is listed twice in features/);
  const twoStates = exportFile({ ...kWhole, featureEnvironments: [environment('banner'), environment('banner', false)] });
  await refusedWhole(t, [twoStates], /feature "banner" is listed twice in featureEnvironments/);
});

t.test('a feature of one project in one file and of another in the next: refused, nothing written', async (t) => {
  const development = exportFile({
    ...kWhole,
    featureEnvironments: [{ ...environment('banner'), environment: 'development' }],
  });
  const production = exportFile({ ...kWhole, features: [feature('banner', 'mobile')] });
  await refusedWhole(
    t,
    [development, production],
    /feature "banner" is of project "web" in .*export-\d+\.json and of project "mobile" in .*export-\d+\.json/,
  );
});

t.test('a child exported without its parent: refused by name; --apply writes nothing', async (t) => {
  const path = exportFile({
    features: [feature('banner'), feature('child')],
    featureStrategies: [strategy('banner'), strategy('child')],
    featureEnvironments: [environment('banner'), environment('child')],
    dependencies: [{ feature: 'child', dependencies: [{ feature: 'parent', enabled: true }] }],
  });
  const planned = await cli(dir, args(path));
  t.equal(planned.code, 2, planned.stderr);
  t.match(planned.json.plan.refused, [
    {
      project: 'web',
      flag: 'child',
      refusals: [{ where: 'dependencies', reason: /its parent "parent" is not among project "web"'s features/ }],
    },
  ]);
  t.same(Object.keys(planned.json.plan.projects[0].file.flags), ['banner'], 'the child is not in the file');
  const text = await cli(dir, args(path), { json: false });
  t.match(text.stdout, /Not carried: 1 flag\(s\)[\s\S]*web\/child\n {4}dependencies: its parent "parent"/);
  await expectRefused(t, dir, [...args(path), '--apply'], {
    error: 'Invalid request',
    detail: /Nothing was applied: 1 flag\(s\) cannot be carried \(web\/child\)/,
  });
});

t.test('a child whose parent is not carried is not carried either, down the line', async (t) => {
  const path = exportFile({
    features: [feature('parent', 'app'), feature('child', 'app'), feature('grandchild', 'app'), feature('other', 'app')],
    featureStrategies: [strategy('parent', 'my-own-strategy'), strategy('child'), strategy('grandchild'), strategy('other')],
    featureEnvironments: ['parent', 'child', 'grandchild', 'other'].map((f) => environment(f)),
    dependencies: [
      { feature: 'child', dependencies: [{ feature: 'parent' }] },
      { feature: 'grandchild', dependencies: [{ feature: 'child' }] },
    ],
  });
  const planned = await cli(dir, args(path));
  t.equal(planned.code, 2, planned.stderr);
  const reasons = Object.fromEntries(
    planned.json.plan.refused.map((f: { flag: string; refusals: { reason: string }[] }) => [f.flag, f.refusals.map((r) => r.reason)]),
  );
  t.same(Object.keys(reasons).sort(), ['child', 'grandchild', 'parent']);
  t.match(reasons.parent, [/custom strategy/]);
  t.match(reasons.child, [/its parent "parent" is not carried/]);
  t.match(reasons.grandchild, [/its parent "child" is not carried/]);
  await expectRefused(t, dir, [...args(path), '--apply'], { error: 'Invalid request', detail: /Nothing was applied: 3 flag\(s\)/ });
  const applied = await cli(dir, [...args(path), '--apply', '--skip-refused']);
  t.equal(applied.code, 0, applied.stderr);
  const project = (await cli(dir, ['project', 'list', '--org', orgB])).json.projects.find((p: { name: string }) => p.name === 'app');
  const flags = (await cli(dir, ['flag', 'list', project.id])).json.flags;
  t.same(
    flags.map((f: { name: string }) => f.name),
    ['other'],
    'only the flag that answers as in Unleash',
  );
});
