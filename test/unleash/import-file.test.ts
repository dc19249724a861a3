// `flagwire import unleash --file` (issue 60, item 4) with Unleash's export files, one per environment,
// written here in the shape Unleash 7 writes (test/unleash/import-real.test.ts reads a real Unleash): several
// projects, each a Flagwire project; a project that exists updated, its environments kept; what an export
// cannot carry (a segment's constraints) and what no Flagwire rule carries (applicationHostname, a custom
// strategy) named per flag; every file that is not an export refused with why, and nothing written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli, expectRefused } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';
import { inList } from '../helpers/unleash-server.js';

const dir = scratchDir('flagwire-unleash-file-');
// The export files beside the data directory: Flagwire refuses a data directory holding files not its own.
const files = scratchDir('flagwire-unleash-exports-');
const world = buildWorld(dir);
const { orgA, orgB, multi } = world.ids;
await world.store.close();

const feature = (name: string, project: string) => ({
  name,
  project,
  description: `${name} here`,
  type: 'release',
  stale: false,
  impressionData: false,
  archived: false,
});
const strategy = (featureName: string, name: string, extra: Record<string, unknown> = {}) => ({
  id: `${featureName}-${name}`,
  name,
  featureName,
  title: null,
  parameters: {},
  constraints: [],
  variants: [],
  disabled: false,
  segments: [],
  ...extra,
});
const kFeatures = [
  feature('web-banner', 'web'),
  { ...feature('web-beta', 'web'), type: 'kill-switch' },
  { ...feature('web-host', 'web'), impressionData: true },
  feature('app-custom', 'mobile'),
  { ...feature('app-segment', 'mobile'), stale: true },
  feature('Platform', 'mobile'),
];

function exportOf(environment: string, enabled: string[], strategies: object[]): string {
  return JSON.stringify({
    features: kFeatures,
    featureStrategies: strategies,
    featureEnvironments: kFeatures.map((f) => ({
      enabled: enabled.includes(f.name),
      featureName: f.name,
      environment,
      variants: [],
      name: f.name,
    })),
    contextFields: [],
    featureTags: [{ featureName: 'web-banner', tagType: 'simple', tagValue: 'homepage' }],
    segments: [{ id: 7, name: 'pro' }],
    tagTypes: [{ name: 'simple', description: '', icon: '#' }],
    dependencies: [],
    links: [],
  });
}
const file = (name: string, text: string) => {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
};
const dev = file(
  'development.json',
  exportOf(
    'development',
    ['web-banner', 'web-beta', 'web-host', 'app-custom', 'app-segment'],
    [
      strategy('web-banner', 'default'),
      strategy('web-beta', 'default', { constraints: [inList('plan', ['beta'])] }),
      strategy('web-host', 'applicationHostname', { parameters: { hostNames: 'a.example' } }),
      strategy('app-custom', 'my-own-strategy'),
      strategy('app-segment', 'default', { segments: [7] }),
      // A disabled strategy is not evaluated: not carried, and nothing to report.
      strategy('web-banner', 'applicationHostname', { disabled: true }),
    ],
  ),
);
const prod = file(
  'production.json',
  exportOf('production', ['web-beta'], [strategy('web-beta', 'default', { constraints: [inList('plan', ['pro'])] })]),
);
const args = (org: string, ...files: string[]) => ['import', 'unleash', '--org', org, ...files.flatMap((f) => ['--file', f])];

t.test('two projects from two environments: planned, what cannot be carried named per flag', async (t) => {
  const r = await cli(dir, args(orgB, dev, prod));
  t.equal(r.code, 2, JSON.stringify(r.json));
  const { plan } = r.json;
  t.same(
    plan.projects.map((p: { name: string; projectId: null }) => [p.name, p.projectId]),
    [
      ['web', null],
      ['mobile', null],
    ],
  );
  const web = plan.projects[0].file;
  t.same(web.environments, ['development', 'production']);
  t.same(Object.keys(web.flags), ['web-banner', 'web-beta']);
  t.same(web.flags['web-banner'].tags, ['simple:homepage', 'unleash-type:release']);
  t.notOk('type' in web.flags['web-banner'], 'a release feature is a release flag, the default, left unsaid');
  t.equal(web.flags['web-beta'].type, 'kill-switch', "Unleash's type is the flag's type");
  t.match(web.flags['web-beta'].environments, {
    development: { enabled: true, unleash: { strategies: [{ name: 'default', constraints: [inList('plan', ['beta'])] }] } },
    production: { enabled: true, unleash: { strategies: [{ name: 'default', constraints: [inList('plan', ['pro'])] }] } },
  });
  t.same(Object.keys(plan.projects[1].file.flags), ['Platform'], 'a flag enabled nowhere is carried, off');
  const reasons = Object.fromEntries(
    plan.refused.map((f: { flag: string; refusals: { reason: string; awaitsModel: boolean }[] }) => [f.flag, f.refusals]),
  );
  t.same(Object.keys(reasons).sort(), ['app-custom', 'app-segment', 'web-host']);
  t.match(reasons['web-host'], [{ where: /development\.strategies\[0\] \(applicationHostname\)/, reason: /host the SDK runs on/ }]);
  t.match(reasons['app-custom'], [{ reason: /custom strategy/ }]);
  t.match(reasons['app-segment'], [{ reason: /segment "pro", whose constraints an export file does not carry.*--url/ }]);
  t.match(plan.notes, [{ project: 'mobile', flag: 'app-segment', note: /stale/ }]);
});

t.test('the plan as text says what "(console only)" means', async (t) => {
  const r = await cli(dir, args(orgB, dev, prod), { json: false });
  t.equal(r.code, 2);
  t.match(r.stdout, /\+ environment development {2}\(console only\)/);
  t.match(
    r.stdout,
    /\n\(console only\): a change only the console and the command line make, as this import does; the Management API \(POST \/api\/v1\/apply\) refuses it/,
  );
});

t.test('applied (skipping the refused flags): the projects are made; again, nothing changes', async (t) => {
  const applied = await cli(dir, [...args(orgB, dev, prod), '--apply', '--skip-refused']);
  t.equal(applied.code, 0, applied.stderr);
  t.equal(applied.json.applied.length, 2);
  const projects = (await cli(dir, ['project', 'list', '--org', orgB])).json.projects;
  const web = projects.find((p: { name: string }) => p.name === 'web');
  t.same(web.environments, ['development', 'production']);
  const flags = (await cli(dir, ['flag', 'list', web.id])).json.flags;
  t.same(flags.map((f: { name: string }) => f.name).sort(), ['web-banner', 'web-beta']);
  const banner = flags.find((f: { name: string }) => f.name === 'web-banner');
  t.same(
    [banner.description, banner.tags],
    ['web-banner here', ['simple:homepage', 'unleash-type:release']],
    "Unleash's description and tags, stored",
  );
  const again = await cli(dir, args(orgB, dev, prod));
  t.equal(again.code, 0);
  t.ok(again.json.plan.projects.every((p: { changes: unknown[] }) => p.changes.length === 0));
});

t.test('a project of the same name is updated: its environments kept, the flags added', async (t) => {
  const existing = (await cli(dir, ['project', 'show', multi])).json;
  const renamed = file(
    'renamed.json',
    exportOf('production', ['web-beta'], []).replaceAll('"project":"web"', `"project":${JSON.stringify(existing.name)}`),
  );
  const r = await cli(dir, args(orgA, renamed));
  t.equal(r.code, 2);
  const project = r.json.plan.projects.find((p: { name: string }) => p.name === existing.name);
  t.equal(project.projectId, multi);
  t.same(project.file.environments, existing.environments, 'the stored environments, production among them');
  t.same(
    project.changes.filter((c: { kind: string }) => c.kind === 'flag').map((c: { name: string; op: string }) => [c.op, c.name]),
    [
      ['create', 'web-banner'],
      ['create', 'web-beta'],
      ['create', 'web-host'],
    ],
  );
});

t.test('what is not an export is refused with why, and nothing is written', async (t) => {
  await expectRefused(t, dir, [...args(orgB, file('text.json', 'not json')), '--apply'], {
    error: 'Invalid request',
    detail: /text\.json is not JSON/,
  });
  await expectRefused(t, dir, args(orgB, file('state.json', '{"version":1,"features":[]}')), {
    error: 'Invalid request',
    detail: /state\.json: it looks like Unleash's older state export/,
  });
  await expectRefused(t, dir, args(orgB, file('other.json', '{"flags":{}}')), {
    error: 'Invalid request',
    detail: /other\.json: it is not Unleash's feature export/,
  });
  await expectRefused(t, dir, args(orgB, dev, file('dev2.json', exportOf('development', [], []))), {
    error: 'Invalid request',
    detail: /both exports of environment "development"/,
  });
  const empty = file('empty.json', JSON.stringify({ features: [], featureStrategies: [], tagTypes: [] }));
  await expectRefused(t, dir, args(orgB, empty), {
    error: 'Invalid request',
    detail: /an export is of one environment, and this one names none/,
  });
  await expectRefused(t, dir, args('org_none', dev), { error: 'Not found', detail: /No organisation "org_none"/ });
  await expectRefused(t, dir, ['import', 'unleash', '--org', orgB, '--url', 'http://127.0.0.1:1'], {
    error: 'Invalid request',
    code: 2,
    detail: /--url needs --token/,
  });
  await expectRefused(t, dir, [...args(orgB, dev), '--url', 'http://127.0.0.1:1', '--token', 'x'], {
    error: 'Invalid request',
    code: 2,
    detail: /exactly one of --url/,
  });
  await expectRefused(t, dir, ['import', 'unleash', '--org', orgB, '--url', 'http://127.0.0.1:1', '--token', 'x'], {
    error: 'Invalid request',
    detail: /cannot reach Unleash at http:\/\/127\.0\.0\.1:1/,
  });
});
