// Black-box, against a real Unleash (unleash-server 7.5.1, started once for this file: test/helpers/
// unleash-server.ts): flags of many shapes made through Unleash's admin API, `flagwire import unleash
// --url` planned (every flag not carried named with why, nothing applied), applied, planned again (no
// change), then served by a real Flagwire: for every generated context and both environments, the stock
// `unleash-client` SDK on Unleash, the same SDK on Flagwire's client API and Flagwire's OFREP answer alike
// (isEnabled and getVariant) for every imported flag: every shape carried in Unleash's model as a rule
// type (issue 60, item 3), those Flagwire's own boolean state could say (kNative) and the others.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Context, Unleash } from 'unleash-client';
import { cli } from '../helpers/cli.js';
// 600 OFREP requests: over kept-alive node:http, far cheaper for this process than fetch.
import { keptAliveCall as call } from '../helpers/http.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startTestServer } from '../helpers/server.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { inList, startUnleash } from '../helpers/unleash-server.js';
import { startUnleashSdk } from '../helpers/unleash-sdk.js';
import { buildWorld } from '../helpers/world.js';

const kEnvs = ['development', 'production'] as const;
/** The names of the features an SDK was given, sorted. */
const said = (sdk: Unleash): string[] => (sdk.getFeatureToggleDefinitions() ?? []).map((f) => f.name).sort();
const unleash = await startUnleash(
  t,
  await sharedPostgres(),
  kEnvs.map((environment) => ({ project: 'default', environment })),
);
t.comment(`Unleash started in ${unleash.started.wallMs} ms, ${unleash.started.cpuMs} ms of CPU`);

const project = '/api/admin/projects/default';
const feature = (name: string, description = '') => unleash.admin('POST', `${project}/features`, { name, description, type: 'release' });
const strategy = (name: string, env: string, body: Record<string, unknown>) =>
  unleash.admin('POST', `${project}/features/${name}/environments/${env}/strategies`, { constraints: [], parameters: {}, ...body });
const on = (name: string, env: string) => unleash.admin('POST', `${project}/features/${name}/environments/${env}/on`);
const rollout = (name: string, env: string, percent: number, extra: Record<string, unknown> = {}, stickiness = 'default') =>
  strategy(name, env, { name: 'flexibleRollout', parameters: { rollout: String(percent), stickiness, groupId: name }, ...extra });

const segment = (await unleash.admin('POST', '/api/admin/segments', { name: 'pro-customers', constraints: [inList('plan', ['pro'])] })) as {
  id: number;
};

// Carried by today's Flagwire.
await feature('everyone', 'on for all in development');
await strategy('everyone', 'development', { name: 'default' });
await on('everyone', 'development');
await unleash.admin('POST', '/api/admin/features/everyone/tags', { type: 'simple', value: 'checkout' });
await feature('cohort-list');
for (const env of kEnvs) {
  await strategy('cohort-list', env, { name: 'default', constraints: [inList('cohort', ['vip', 'staff'])] });
  await on('cohort-list', env);
}
await feature('beta-in-eu');
await strategy('beta-in-eu', 'production', { name: 'default', constraints: [inList('plan', ['beta', 'pro']), inList('region', ['eu'])] });
await on('beta-in-eu', 'production');
await feature('full-rollout');
await rollout('full-rollout', 'development', 100, { constraints: [inList('plan', ['beta'])] });
await on('full-rollout', 'development');
await feature('nobody');
await rollout('nobody', 'development', 0);
await on('nobody', 'development');
await feature('pro-segment');
await strategy('pro-segment', 'production', { name: 'default', segments: [segment.id] });
await on('pro-segment', 'production');
await feature('cohort-or-beta');
await strategy('cohort-or-beta', 'development', { name: 'default', constraints: [inList('cohort', ['vip'])] });
await strategy('cohort-or-beta', 'development', { name: 'default', constraints: [inList('plan', ['beta'])] });
await on('cohort-or-beta', 'development');
await feature('off-with-strategy');
await strategy('off-with-strategy', 'production', { name: 'default' });
const kEverTrue = [
  'development/cohort-list',
  'development/cohort-or-beta',
  'development/everyone',
  'development/full-rollout',
  'production/beta-in-eu',
  'production/cohort-list',
  'production/pro-segment',
];
const kWasRefused = ['half-rollout', 'by-user-id', 'with-variants', 'new-versions', 'child'];
const kNative = ['everyone', 'cohort-list', 'beta-in-eu', 'full-rollout', 'nobody', 'pro-segment', 'cohort-or-beta', 'off-with-strategy'];
const kCarried = [...kNative, ...kWasRefused];

// Shapes only Unleash's model carries.
await feature('half-rollout');
await rollout('half-rollout', 'development', 50);
await on('half-rollout', 'development');
// Unleash 7 makes no userWithId strategy any more: a rollout sticky to userId reads it instead.
await feature('by-user-id');
await rollout('by-user-id', 'development', 100, {}, 'userId');
await on('by-user-id', 'development');
await feature('with-variants');
// Unleash 7 refuses environment variants: strategy variants are its variants.
await rollout('with-variants', 'development', 100, {
  variants: ['blue', 'green'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'default' })),
});
await feature('new-versions');
await strategy('new-versions', 'production', {
  name: 'default',
  constraints: [{ contextName: 'version', operator: 'SEMVER_GT', value: '2.0.0', inverted: false, caseInsensitive: false }],
});
await feature('child');
await unleash.admin('POST', `${project}/features/child/dependencies`, { feature: 'everyone', enabled: true });

const dir = scratchDir('flagwire-unleash-import-');
const world = buildWorld(dir);
const { orgA } = world.ids;
await world.store.close();
const importArgs = ['import', 'unleash', '--org', orgA, '--url', unleash.baseUrl, '--token', unleash.adminToken];

t.test('the plan: one project with both environments, the carried flags, each other flag named with why; nothing applied', async (t) => {
  const planned = await cli(dir, importArgs);
  t.equal(planned.code, 2, 'a plan with changes exits 2, as `flagwire plan` does');
  const { plan, applied } = planned.json;
  t.equal(applied, null);
  t.equal(plan.projects.length, 1);
  t.match(plan.projects[0], { unleashProject: 'default', name: 'Default', projectId: null });
  const created = plan.projects[0].changes.filter((c: { kind: string }) => c.kind === 'flag').map((c: { name: string }) => c.name);
  t.same(created.sort(), [...kCarried].sort());
  t.same(plan.projects[0].file.environments, ['development', 'production']);
  t.same(plan.projects[0].file.flags.everyone.tags, ['simple:checkout', 'unleash-type:release']);
  t.equal(plan.projects[0].file.flags.everyone.description, 'on for all in development');
  t.same(plan.refused, [], "every flag carried in Unleash's model");
  const listed = await cli(dir, ['project', 'list', '--org', orgA]);
  t.notOk(
    listed.json.projects.some((p: { name: string }) => p.name === 'Default'),
    'no project was made',
  );
});

t.test("Unleash's own export files plan the same import, but for the segment an export names without its constraints", async (t) => {
  // Beside the data directory: Flagwire refuses a data directory holding files not its own.
  const exports = scratchDir('flagwire-unleash-real-exports-');
  const files = await Promise.all(
    kEnvs.map(async (environment) => {
      const path = join(exports, `${environment}.json`);
      writeFileSync(
        path,
        JSON.stringify(await unleash.admin('POST', '/api/admin/features-batch/export', { environment, project: 'default' })),
      );
      return path;
    }),
  );
  const fromApi = (await cli(dir, importArgs)).json.plan;
  const fromFiles = (await cli(dir, ['import', 'unleash', '--org', orgA, ...files.flatMap((f) => ['--file', f])])).json.plan;
  t.same(fromFiles.refused.map((f: { flag: string }) => f.flag).sort(), ['pro-segment']);
  t.match(fromFiles.refused.find((f: { flag: string }) => f.flag === 'pro-segment').refusals, [
    { reason: /segment "pro-customers", whose constraints an export file does not carry/ },
  ]);
  const { 'pro-segment': _segment, ...others } = fromApi.projects[0].file.flags;
  t.same(fromFiles.projects[0].file.flags, others, 'every other flag the same as read from the API');
  t.equal(fromFiles.projects[0].name, 'default', "a file has the project's id, not its name");
});

t.test('applied with --skip-refused, then planned again: no change', async (t) => {
  const applied = await cli(dir, [...importArgs, '--apply', '--skip-refused']);
  t.equal(applied.code, 0, applied.stderr);
  t.equal(applied.json.applied.length, 1);
  const projectId = (await cli(dir, ['project', 'list', '--org', orgA])).json.projects.find(
    (p: { name: string }) => p.name === 'Default',
  ).id;
  const everyone = (await cli(dir, ['flag', 'list', projectId])).json.flags.find((f: { name: string }) => f.name === 'everyone');
  t.same(
    [everyone.description, everyone.tags],
    ['on for all in development', ['simple:checkout', 'unleash-type:release']],
    "Unleash's description and tags, stored",
  );
  const again = await cli(dir, importArgs);
  t.equal(again.code, 0, 'the same import again changes nothing');
  t.same(again.json.plan.projects[0].changes, []);
});

t.test('every imported flag answers every context as Unleash does: the SDK on Flagwire, and OFREP', async (t) => {
  const listed = await cli(dir, ['project', 'list', '--org', orgA]);
  const projectId = listed.json.projects.find((p: { name: string }) => p.name === 'Default').id;
  const tokens = Object.fromEntries(
    await Promise.all(
      kEnvs.map(async (env) => {
        const made = await cli(dir, [
          'token',
          'create',
          projectId,
          '--name',
          `sdk-${env}`,
          '--permission',
          'read',
          '--env',
          env,
          '--as',
          world.ids.owner,
        ]);
        return [env, made.json.secret as string];
      }),
    ),
  );
  const server = await startTestServer({ dataDir: dir });
  t.teardown(() => server.stop());
  const sdk = (baseUrl: string, token: string, appName: string) => startUnleashSdk(t, baseUrl, token, appName);
  let compared = 0;
  const trues = new Map<string, number>();
  for (const env of kEnvs) {
    const reference = await sdk(unleash.baseUrl, unleash.clientToken('default', env), `ref-${env}`);
    const imported = await sdk(server.baseUrl, tokens[env]!, `flagwire-${env}`);
    t.same(said(imported), [...kCarried].sort(), `${env}: the client API says every carried flag`);
    for (let i = 0; i < 300; i++) {
      const properties: Record<string, string> = {};
      // Each property present or not, and of each value, independently of the others (coprime periods).
      if (i % 3 !== 1) properties.plan = ['beta', 'pro', 'free', 'Beta'][Math.floor(i / 3) % 4]!;
      if (i % 5 !== 0) properties.region = ['eu', 'us', 'eu '][Math.floor(i / 5) % 3]!;
      if (i % 7 < 3) properties.cohort = ['vip', 'staff', 'other'][Math.floor(i / 7) % 3]!;
      const context: Context = {
        properties,
        ...(i % 4 === 0 ? {} : { userId: `user-${i}` }),
        ...(i % 6 === 0 || i % 4 === 0 ? { sessionId: `s-${i}` } : {}),
      };
      const answers = await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
        headers: { 'X-Flagwire-Project': projectId },
        body: {
          context: {
            ...properties,
            env,
            // As Flagwire's flat contexts give Unleash's (src/unleash/rules/fields.ts): userId the targeting key, sessionId an attribute.
            ...(context.userId === undefined ? {} : { targetingKey: context.userId }),
            ...(context.sessionId === undefined ? {} : { sessionId: context.sessionId }),
          },
        },
      });
      t.equal(answers.status, 200);
      const ofrep = new Map((answers.json.flags as { key: string; value: unknown }[]).map((f) => [f.key, f.value]));
      for (const name of kCarried) {
        const expected = reference.isEnabled(name, context);
        const viaSdk = imported.isEnabled(name, context);
        if (viaSdk !== expected) t.fail(`${env} ${name} ${JSON.stringify(context)}: Unleash ${expected}, the SDK on Flagwire ${viaSdk}`);
        if (ofrep.get(name) !== expected)
          t.fail(`${env} ${name} ${JSON.stringify(context)}: Unleash ${expected}, OFREP ${ofrep.get(name)}`);
        const variant = reference.getVariant(name, context).name;
        if (imported.getVariant(name, context).name !== variant)
          t.fail(`${env} ${name} ${JSON.stringify(context)}: variant ${variant} in Unleash`);
        if (expected) trues.set(`${env}/${name}`, (trues.get(`${env}/${name}`) ?? 0) + 1);
        compared++;
      }
    }
  }
  t.equal(compared, 2 * 300 * kCarried.length, 'every carried flag, every context, both environments');
  // Not all one value: each flag's environment where Unleash lets anyone in let some in, and the targeted ones kept some out.
  for (const key of kEverTrue) t.ok(trues.has(key), `${key}: some context gets it`);
  t.equal(trues.get('development/everyone'), 300, 'everyone: every context');
  for (const key of kEverTrue.filter((k) => k !== 'development/everyone')) t.ok(trues.get(key)! < 300, `${key}: some contexts kept out`);
  t.comment(`Unleash CPU after the file's work: ${unleash.cpuMs()} ms`);
});
