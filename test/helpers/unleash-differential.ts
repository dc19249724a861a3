// The differential of issue 60: flags of many shapes made in a real Unleash (unleash-server, started by
// unleash-server.ts), imported into Flagwire with `flagwire import unleash --url`, and then, for each
// generated context, every flag asked of Flagwire's front-end API (POST /api/frontend/all with a client
// key of the imported project) and of the stock unleash-client evaluating Unleash's own flags locally
// (connected to the real Unleash): enabled, and the variant's name, enabled and payload, must agree.
//
// Context i is the same in every run (a seeded generator), so test/unleash/frontend-differential.test.ts
// asks the first 2,000 and bench/unleash-differential.bench.ts the first 1,000,000. Contexts are ASCII
// (the Node SDK hashes UTF-16 code units cut to a byte, Flagwire UTF-8: they agree for ASCII), and each
// has a userId or a sessionId, so no flag rolls at random (Unleash's default stickiness rolls without
// either): every answer is the flags' and the context's alone.
import type { Context, Unleash } from 'unleash-client';
import { cli } from './cli.js';
import { keptAliveCall } from './http.js';
import { random } from './seeded-random.js';
import { inList, type TestUnleash } from './unleash-server.js';
import { buildWorld } from './world.js';

/** The environment the flags are made in, asked in, and the SDK's token is for. */
export const kDifferentialEnv = 'development';

const kProject = '/api/admin/projects/default';
const constraint = (contextName: string, operator: string, extra: Record<string, unknown>) => ({
  contextName,
  operator,
  inverted: false,
  caseInsensitive: false,
  ...extra,
});

/**
 * Makes the flags in `unleash` (project `default`, on in kDifferentialEnv but one) and returns their
 * names: every strategy Unleash 7.5 makes, every operator it has (inverted and case-insensitive
 * too), a segment, strategy variants with each stickiness and payload type, and dependencies.
 */
export async function seedDifferentialFlags(unleash: TestUnleash): Promise<string[]> {
  const env = kDifferentialEnv;
  const names: string[] = [];
  const feature = async (name: string, strategies: Record<string, unknown>[], on = true) => {
    await unleash.admin('POST', `${kProject}/features`, { name, type: 'release' });
    for (const s of strategies)
      await unleash.admin('POST', `${kProject}/features/${name}/environments/${env}/strategies`, { constraints: [], parameters: {}, ...s });
    if (on) await unleash.admin('POST', `${kProject}/features/${name}/environments/${env}/on`);
    names.push(name);
  };
  const rollout = (rollout: number, stickiness: string, groupId: string, extra: Record<string, unknown> = {}) => ({
    name: 'flexibleRollout',
    parameters: { rollout: String(rollout), stickiness, groupId },
    ...extra,
  });
  const only = (...constraints: Record<string, unknown>[]) => ({ name: 'default', constraints });
  const segment = (await unleash.admin('POST', '/api/admin/segments', {
    name: 'pro-in-eu',
    constraints: [inList('plan', ['pro']), inList('region', ['eu'])],
  })) as { id: number };

  await feature('everyone', [{ name: 'default' }]);
  await feature('rollout-default', [rollout(37, 'default', 'g-default')]);
  await feature('rollout-user', [rollout(60, 'userId', 'rollout-user')]);
  await feature('rollout-session', [rollout(25, 'sessionId', 'g-session')]);
  await feature('strings', [
    only(
      constraint('email', 'STR_CONTAINS', { values: ['@example.'], caseInsensitive: true }),
      constraint('plan', 'STR_STARTS_WITH', { values: ['be', 'pr'] }),
    ),
  ]);
  await feature('ends-inverted', [only(constraint('email', 'STR_ENDS_WITH', { values: ['.org'], inverted: true }))]);
  await feature('in-not-in', [only(inList('region', ['eu', 'us']), constraint('plan', 'NOT_IN', { values: ['free'] }))]);
  await feature('numbers', [only(constraint('age', 'NUM_GT', { value: '18' }), constraint('age', 'NUM_LTE', { value: '65' }))]);
  await feature('number-edges', [
    only(constraint('age', 'NUM_EQ', { value: '30', inverted: true }), constraint('score', 'NUM_GTE', { value: '0.5' })),
    only(constraint('score', 'NUM_LT', { value: '0.1' })),
  ]);
  await feature('dates', [
    only(
      constraint('currentTime', 'DATE_AFTER', { value: '2024-01-01T00:00:00.000Z' }),
      constraint('currentTime', 'DATE_BEFORE', { value: '2030-01-01T00:00:00.000Z' }),
    ),
  ]);
  await feature('semver', [
    only(constraint('version', 'SEMVER_GT', { value: '1.2.0' }), constraint('version', 'SEMVER_LT', { value: '3.0.0-beta.2' })),
  ]);
  await feature('semver-eq-inverted', [only(constraint('version', 'SEMVER_EQ', { value: '2.0.0', inverted: true }))]);
  await feature('regex', [only(constraint('email', 'REGEX', { value: '^[a-m][0-9]*@example\\.(com|org)$' }))]);
  await feature('regex-case-insensitive', [only(constraint('email', 'REGEX', { value: '@EXAMPLE\\.COM$', caseInsensitive: true }))]);
  await feature('segment', [{ name: 'default', segments: [segment.id] }]);
  await feature('two-strategies', [
    rollout(10, 'userId', 'two', { constraints: [inList('plan', ['beta'])] }),
    only(inList('region', ['us'])),
  ]);
  const variants = (stickiness: string, list: [string, number, { type: string; value: string }][]) =>
    list.map(([name, weight, payload]) => ({ name, weight, weightType: 'variable', stickiness, payload }));
  await feature('variants', [
    rollout(100, 'default', 'variants', {
      variants: variants('default', [
        ['blue', 500, { type: 'string', value: 'b' }],
        ['green', 300, { type: 'json', value: '{"shade": 2}' }],
        ['red', 200, { type: 'string', value: 'r' }],
      ]),
    }),
  ]);
  await feature('variants-by-user', [
    rollout(80, 'userId', 'variants-by-user', {
      constraints: [constraint('plan', 'IN', { values: ['beta', 'pro'] })],
      variants: variants('userId', [
        ['one', 250, { type: 'number', value: '1' }],
        ['two', 750, { type: 'csv', value: 'a,b' }],
      ]),
    }),
  ]);
  await feature('off', [{ name: 'default' }], false);
  const depend = async (name: string, dependency: Record<string, unknown>) => {
    await feature(name, [{ name: 'default' }]);
    await unleash.admin('POST', `${kProject}/features/${name}/dependencies`, dependency);
  };
  await depend('child-of-rollout', { feature: 'rollout-default', enabled: true });
  await depend('child-of-blue', { feature: 'variants', enabled: true, variants: ['blue'] });
  await depend('child-without-segment', { feature: 'segment', enabled: false });
  return names;
}

const kPlans = ['beta', 'pro', 'free', 'Beta', 'be', 'professional', ''];
const kRegions = ['eu', 'us', 'apac', 'EU', 'eu '];
const kDomains = ['example.com', 'Example.COM', 'example.org', 'test.org', 'mail.net'];
const kAges = ['17', '18', '19', '30', '30.0', '65', '66', '-1', 'abc', '1e2', ''];
const kVersions = ['1.0.0', '1.2.0', '1.2.1', '2.0.0', '2.0.0-rc.1', '3.0.0-beta.1', '3.0.0-beta.2', '3.0.0', 'v2.0.0', '2.0', 'x'];
const kTimes = ['2023-06-01T00:00:00.000Z', '2025-03-01T12:00:00.000Z', '2031-01-01T00:00:00.000Z', '2029-12-31T23:59:59.999Z'];

/** A context as the front-end API takes it (JSON: currentTime as ISO text). */
export interface DifferentialContext {
  appName: string;
  userId?: string;
  sessionId?: string;
  remoteAddress?: string;
  currentTime?: string;
  properties: Record<string, string>;
}

/** Context `i`: the same in every run. Each field present or not, and of each value, independently. */
export function differentialContext(i: number): DifferentialContext {
  const r = random(i * 2654435761);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const properties: Record<string, string> = {};
  if (r() < 0.85) properties.plan = pick(kPlans);
  if (r() < 0.8) properties.region = pick(kRegions);
  if (r() < 0.8) properties.email = `${String.fromCharCode(97 + Math.floor(r() * 26))}${Math.floor(r() * 1000)}@${pick(kDomains)}`;
  if (r() < 0.8) properties.age = r() < 0.5 ? pick(kAges) : String(Math.floor(r() * 100));
  if (r() < 0.7) properties.score = (r() * 1.2 - 0.1).toFixed(3);
  if (r() < 0.8) properties.version = pick(kVersions);
  const context: DifferentialContext = { appName: 'differential', properties };
  if (r() < 0.85) context.userId = `user-${Math.floor(r() * 10_000_000)}`;
  // Without a userId a sessionId: the default stickiness rolls at random without either.
  if (r() < 0.5 || context.userId === undefined) context.sessionId = `s-${Math.floor(r() * 10_000_000)}`;
  if (r() < 0.5) context.remoteAddress = `10.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`;
  if (r() < 0.6)
    context.currentTime = r() < 0.5 ? pick(kTimes) : new Date(Date.UTC(2020, 0, 1) + Math.floor(r() * 12 * 365 * 86_400_000)).toISOString();
  return context;
}

/** The flags imported into a new Flagwire data directory `dir`, and a front-end key of their project. */
export async function importForDifferential(unleash: TestUnleash, dir: string): Promise<{ projectId: string; frontendKey: string }> {
  const world = buildWorld(dir);
  const { orgA, owner } = world.ids;
  await world.store.close();
  const imported = await cli(dir, ['import', 'unleash', '--org', orgA, '--url', unleash.baseUrl, '--token', unleash.adminToken, '--apply']);
  if (imported.code !== 0) throw new Error(`the import failed (${imported.code}): ${imported.stderr} ${imported.stdout}`);
  if (imported.json.plan.refused.length > 0) throw new Error(`the import refused flags: ${JSON.stringify(imported.json.plan.refused)}`);
  const listed = await cli(dir, ['project', 'list', '--org', orgA]);
  const projectId = listed.json.projects.find((p: { name: string }) => p.name === 'Default').id as string;
  const key = await cli(dir, [
    'client-key',
    'create',
    projectId,
    '--name',
    'differential',
    '--uses',
    'frontend',
    '--env',
    kDifferentialEnv,
    '--as',
    owner,
  ]);
  if (key.code !== 0) throw new Error(`client-key create failed: ${key.stderr}`);
  return { projectId, frontendKey: key.json.secret as string };
}

interface Toggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } };
}

/** An answer as both sides say it, in one shape: enabled, and the variant. */
function said(enabled: boolean, variant: Toggle['variant']): string {
  const payload = variant.payload === undefined ? '' : ` ${variant.payload.type}:${String(variant.payload.value)}`;
  return `${enabled} ${variant.name} ${variant.enabled}${payload}`;
}

export interface DifferentialRun {
  /** Flagwire's origin. */
  baseUrl: string;
  frontendKey: string;
  /** The stock SDK, connected to the real Unleash, synchronized. */
  sdk: Unleash;
  names: readonly string[];
  /** Contexts [from, from + count). */
  from: number;
  count: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Called with each mismatch, described. */
  onMismatch(line: string): void;
  /** Called after each context, with how many are done (for progress). */
  onContext?(done: number): void;
  /** Called with each flag's answer, as both sides gave it (for a test's checks that flags differ by context). */
  onAnswer?(name: string, enabled: boolean): void;
}

/** Asks every context of the run of both sides; returns how many answers were compared. */
export async function runDifferential(run: DifferentialRun): Promise<{ contexts: number; compared: number }> {
  let next = run.from;
  const end = run.from + run.count;
  let done = 0;
  let compared = 0;
  const worker = async () => {
    while (next < end) {
      const i = next++;
      const context = differentialContext(i);
      // The SDK's context as an application gives it: currentTime a Date.
      const sdkContext: Context = {
        ...context,
        currentTime: context.currentTime === undefined ? undefined : new Date(context.currentTime),
      };
      // Kept-alive node:http: a fetch per context cost this process several times the CPU.
      const res = await keptAliveCall(run.baseUrl, 'POST', '/api/frontend/all', {
        headers: { authorization: run.frontendKey },
        body: { context },
      });
      if (res.status !== 200) throw new Error(`context ${i}: the front-end API answered ${res.status} ${res.text}`);
      const toggles = new Map((JSON.parse(res.text) as { toggles: Toggle[] }).toggles.map((t) => [t.name, t]));
      for (const name of run.names) {
        const v = run.sdk.getVariant(name, sdkContext);
        const sdk = said(v.feature_enabled === true, {
          name: v.name,
          enabled: v.enabled,
          ...(v.payload === undefined ? {} : { payload: { type: v.payload.type, value: String(v.payload.value) } }),
        });
        const enabled = run.sdk.isEnabled(name, sdkContext);
        const toggle = toggles.get(name);
        const frontend = toggle === undefined ? 'absent' : said(toggle.enabled, toggle.variant);
        if (frontend !== sdk || enabled !== (v.feature_enabled === true)) {
          run.onMismatch(
            `context ${i} ${JSON.stringify(context)} ${name}: unleash-client "${sdk}" (isEnabled ${enabled}), front-end API "${frontend}"`,
          );
        }
        run.onAnswer?.(name, enabled);
        compared++;
      }
      done++;
      run.onContext?.(done);
    }
  };
  await Promise.all(Array.from({ length: run.concurrency }, worker));
  return { contexts: done, compared };
}
