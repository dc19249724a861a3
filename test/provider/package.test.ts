// Black-box: the packed provider (provider-app.ts: `npm run pack:provider`'s tarball installed with npm
// into an application folder) loads as docs/provider.md promises, with require() in a plain CommonJS
// process and with import in an ES module one, and each evaluates against a real server. The flags are
// in Unleash's model with a REGEX and an IN_CIDR constraint: the engine loads the packages those need on
// first use (src/load-on-use.ts), which the package must carry, as the application installs nothing else.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { principalOf } from '../../src/actor/audit-actor.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { plainNode } from '../helpers/plain-process.js';
import { startTestServer } from '../helpers/server.js';
import { installProviderApp } from './provider-app.js';

const kTsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
// A TypeScript application has Node's types (the SDK's declarations name node:events): this repository's.
const kTypeRoots = fileURLToPath(new URL('../../../node_modules/@types', import.meta.url));

const world = buildEvalWorld();
const { ids } = world;
const constrained = (name: string, constraint: Record<string, unknown>) =>
  world.run('flagCreate', {
    projectId: ids.empty,
    principal: { kind: 'operator' },
    body: { name, enabled: true, unleash: { strategies: [{ name: 'default', constraints: [constraint] }] } },
  });
constrained('pro-plans', { contextName: 'plan', operator: 'REGEX', value: '^pro-[0-9]+$' });
constrained('office', { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['10.0.0.0/8'] });
const token = world.run('tokenCreate', {
  projectId: ids.empty,
  principal: principalOf(ids.owner),
  name: 'package',
  permission: 'read',
}).secret;

t.setTimeout(600_000);
const installed = installProviderApp();
t.comment(`provider installed: ${installed.how}`);
const server = await startTestServer({ dataDir: world.dataDir });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
});

const kQuestions = [
  ['pro-plans', { targetingKey: 'u1', plan: 'pro-12' }],
  ['pro-plans', { targetingKey: 'u1', plan: 'free' }],
  ['office', { targetingKey: 'u1', remoteAddress: '10.1.2.3' }],
  ['office', { targetingKey: 'u1', remoteAddress: '192.168.1.1' }],
];
const kExpected = { answers: [true, false, true, false], reasons: ['TARGETING_MATCH', 'DEFAULT', 'TARGETING_MATCH', 'DEFAULT'] };

/** The body of an application that loads the provider with `load` (its two entries' exports) and prints its answers. */
const program = (load: string) => `${load}
const main = async () => {
  const provider = new FlagwireProvider(JSON.parse(process.argv[2]));
  await OpenFeature.setProviderAndWait(provider);
  const client = OpenFeature.getClient();
  const details = [];
  for (const [key, context] of JSON.parse(process.argv[3])) details.push(await client.getBooleanDetails(key, false, context));
  const events = new FlagwireEvents({ url: 'http://127.0.0.1:9', clientKey: 'fwc_none', onError: () => {} });
  await events.close();
  process.stdout.write(JSON.stringify({
    answers: details.map((d) => d.value),
    reasons: details.map((d) => d.errorMessage ?? d.reason),
    events: typeof events.hook.after,
  }));
  process.exit(0);
};
main();
`;

const run = (file: string) =>
  JSON.parse(
    execFileSync(...plainNode([file, JSON.stringify({ url: server.baseUrl, token, project: ids.empty }), JSON.stringify(kQuestions)]), {
      cwd: installed.dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );

t.test('require(): a plain CommonJS process loads both entries and evaluates', async (t) => {
  const file = join(installed.dir, 'app.cjs');
  writeFileSync(
    file,
    program(`const { OpenFeature } = require('@openfeature/server-sdk');
const { FlagwireProvider } = require('@flagwire/openfeature-provider');
const { FlagwireEvents } = require('@flagwire/openfeature-provider/events');`),
  );
  t.strictSame(run(file), { ...kExpected, events: 'function' });
});

t.test('import: an ES module process loads both entries and evaluates', async (t) => {
  const file = join(installed.dir, 'app-esm.mjs');
  writeFileSync(
    file,
    program(`import { OpenFeature } from '@openfeature/server-sdk';
import { FlagwireProvider } from '@flagwire/openfeature-provider';
import { FlagwireEvents } from '@flagwire/openfeature-provider/events';`),
  );
  t.strictSame(run(file), { ...kExpected, events: 'function' });
});

/** tsc from this repository, strict, on the application's `files` under `options`; its diagnostics ('' when clean). */
function typeCheck(files: string[], options: string[]): string {
  try {
    execFileSync(process.execPath, [kTsc, '--noEmit', '--strict', '--typeRoots', kTypeRoots, '--types', 'node', ...options, ...files], {
      cwd: installed.dir,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return '';
  } catch (err) {
    return (err as { stdout: string }).stdout;
  }
}

// Typed use of both entries: a wrong option must be an error (so the types are not `any`).
const kTypedUse = `
const provider: FlagwireProvider = new FlagwireProvider({ url: 'http://127.0.0.1:8080', token: 'fw_x', project: 'prj_x' });
// @ts-expect-error the url is a string
new FlagwireProvider({ url: 8080, token: 'fw_x', project: 'prj_x' });
const events: FlagwireEvents = new FlagwireEvents({ url: 'http://127.0.0.1:8080', clientKey: 'fwc_x' });
OpenFeature.setProvider(provider);
OpenFeature.addHooks(events.hook);
`;

t.test('TypeScript: typed under NodeNext (ES module and CommonJS) and bundler resolution', async (t) => {
  writeFileSync(
    join(installed.dir, 'typed.mts'),
    `import { OpenFeature } from '@openfeature/server-sdk';
import { FlagwireProvider } from '@flagwire/openfeature-provider';
import { FlagwireEvents } from '@flagwire/openfeature-provider/events';
${kTypedUse}`,
  );
  writeFileSync(
    join(installed.dir, 'typed.cts'),
    `import { OpenFeature } from '@openfeature/server-sdk';
import { FlagwireProvider } from '@flagwire/openfeature-provider';
import { FlagwireEvents } from '@flagwire/openfeature-provider/events';
${kTypedUse}`,
  );
  writeFileSync(join(installed.dir, 'typed-bundler.ts'), readFileSync(join(installed.dir, 'typed.mts'), 'utf8'));
  const nodeNext = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
  t.equal(typeCheck(['typed.mts', 'typed.cts'], nodeNext), '', 'NodeNext: import and require both typed');
  t.equal(typeCheck(['typed-bundler.ts'], ['--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022']), '', 'bundler');
});

t.test('npm publish --dry-run: clean, public, and only what the package needs', async (t) => {
  const dryRun = spawnSync('npm', ['publish', '--dry-run', '--json', installed.tarball], { cwd: installed.dir, encoding: 'utf8' });
  t.equal(dryRun.status, 0, dryRun.stderr);
  // The one warning a dry run gives anywhere: nobody is logged in to the registry here.
  const warnings = dryRun.stderr.split('\n').filter((line) => /npm warn/i.test(line) && !/requires you to be logged in/.test(line));
  t.same(warnings, [], 'no warning');
  const answer = JSON.parse(dryRun.stdout) as Record<string, { name: string; version: string; files: { path: string }[] }>;
  const published = answer['@flagwire/openfeature-provider']!;
  const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  t.equal(published.name, '@flagwire/openfeature-provider');
  t.equal(published.version, version, "Flagwire's version");
  t.same(published.files.map((f) => f.path).sort(), [
    'LICENSE',
    'README.md',
    'dist/events.cjs',
    'dist/events.d.cts',
    'dist/events.d.ts',
    'dist/events.js',
    'dist/index.cjs',
    'dist/index.d.cts',
    'dist/index.d.ts',
    'dist/index.js',
    'dist/provider.d.cts',
    'dist/provider.d.ts',
    'package.json',
  ]);
  const manifest = JSON.parse(execFileSync('tar', ['xzOf', installed.tarball, 'package/package.json'], { encoding: 'utf8' })) as {
    license: string;
    publishConfig?: { access?: string };
    exports: Record<string, unknown>;
  };
  t.not(manifest.license, 'UNLICENSED', 'a licence users may install under');
  t.equal(manifest.publishConfig?.access, 'public', 'a scoped package published public');
  t.same(Object.keys(manifest.exports), ['.', './events', './package.json']);
});
