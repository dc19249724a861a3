// The command line loads only what it runs (src/cli/cli.ts): help, the version and usage errors are
// answered from the commands' shapes the build derives (dist/src/cli/commands.json, by
// scripts/build-cli.mjs) with no capability loaded, and a command runs from the build's bundle without
// the server's packages. The derived table is the commands' shapes, and every answer given from it is
// byte for byte the one main.ts gives from the commands themselves.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { CommandSpec } from '../../src/cli/command/args.js';
import type { CliCommand } from '../../src/cli/command/cli-command.js';
import { answerBeforeRun, type CliIo } from '../../src/cli/answers.js';
import { kCliCommands } from '../../src/cli/commands.js';
import { main } from '../../src/cli/main.js';
import { kCli } from '../helpers/server.js';

const kDerived = JSON.parse(readFileSync(new URL('../../src/cli/commands.json', import.meta.url), 'utf8')) as CommandSpec[];
const kModuleLog = fileURLToPath(new URL('../helpers/module-log.js', import.meta.url));
const kDist = new URL('../../src/', import.meta.url).href;
/** The modules the entry runs outside the bundles (the bin, one file: scripts/build-cli.mjs), by path under dist/src, as the build derives them. */
const kEntryOwn = (
  JSON.parse(readFileSync(new URL('../../src/cli/bundle/outside-modules.json', import.meta.url), 'utf8')) as { entry: string[] }
).entry;
const io: CliIo = { env: {}, commandLine: null, stdin: process.stdin };

/** The real binary, in a process of its own, with the modules it loads named. */
function flagwire(args: string[]): { code: number | null; stdout: string; stderr: string; loaded: string[] } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.FLAGWIRE_DATA;
  delete env.FLAGWIRE_TEST_CAPABILITY;
  const r = spawnSync(process.execPath, ['--import', kModuleLog, kCli, ...args], { encoding: 'utf8', env });
  const lines = r.stderr.split('\n');
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: lines.filter((l) => !l.startsWith('loaded ')).join('\n'),
    loaded: lines.filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length)),
  };
}

/** Flagwire's own modules among `loaded`, by path under dist/src, and the npm packages, by name. */
function sources(loaded: string[]): { ours: string[]; packages: Set<string> } {
  const ours = loaded.filter((u) => u.startsWith(kDist)).map((u) => u.slice(kDist.length));
  const packages = new Set(loaded.flatMap((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1] ?? []));
  return { ours, packages };
}

t.test("the derived table is the commands' shapes, in their order", async (t) => {
  const shape = (c: CliCommand) =>
    JSON.parse(
      JSON.stringify({
        name: c.name,
        usage: c.usage,
        summary: c.summary,
        positionals: c.positionals,
        argumentHelp: c.argumentHelp,
        options: c.options,
        notes: c.notes,
        longRunning: c.longRunning,
      }),
    );
  t.strictSame(kDerived, kCliCommands.map(shape));
});

t.test('every answer given without running a command is the same from the derived table', async (t) => {
  const lines: string[][] = [
    [],
    ['--help'],
    ['help'],
    ['--version'],
    ['--version', '--json'],
    ['nope'],
    ['--json', 'nope'],
    ['--version', 'x'],
  ];
  for (const c of kCliCommands) {
    const words = c.name.split(' ');
    lines.push([...words, '--help'], [...words, '--json', '--no-such-option'], [words[0]!, '--help'], [words[0]!]);
    if (c.positionals.length > 0 || Object.values(c.options).some((o) => o.required)) lines.push(words, [...words, '--json']);
  }
  let answered = 0;
  for (const argv of lines) {
    const derived = answerBeforeRun(argv, kDerived, io);
    const own = answerBeforeRun(argv, kCliCommands, io);
    if ('outcome' in own) {
      answered++;
      t.strictSame(derived, own, argv.join(' ') || '(nothing)');
    } else {
      t.ok('line' in derived && derived.line.spec.name === own.line.spec.name, `${argv.join(' ')}: the same command to run`);
    }
  }
  t.ok(answered > kCliCommands.length * 2, `${answered} answers compared`);
});

t.test("a setting serve cannot use is answered before serve's bundle loads, with main's answer", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-cli-start-'));
  for (const argv of [
    ['serve', '--port', 'abc'],
    ['serve', '--port', 'abc', '--json'],
    ['serve', '--data', dir, '--flags-file', join(dir, 'flags.json')],
  ]) {
    const r = flagwire(argv);
    const own = (await main(argv, io))!;
    t.equal(r.code, 2, `${argv.join(' ')}: exit 2`);
    t.strictSame([r.code, r.stdout, r.stderr], [own.code, own.stdout, own.stderr], `${argv.join(' ')}: main's answer`);
    const run = sources(r.loaded);
    t.strictSame(
      run.ours.filter((p) => p.startsWith('cli/bundle/')),
      [],
      `${argv.join(' ')}: no bundle loaded`,
    );
    t.strictSame([...run.packages], [], 'and no npm package');
  }
});

t.test("a taken port is answered with main's answer before any thread starts or the data directory is written", async (t) => {
  // serve's bundle loads (the entry does not bind: src/cli/serve-config.ts); start-up tries the port first.
  const data = join(mkdtempSync(join(tmpdir(), 'flagwire-cli-start-')), 'data');
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => taken.close());
  const takenPort = String((taken.address() as AddressInfo).port);
  for (const argv of [
    ['serve', '--port', takenPort, '--host', '127.0.0.1', '--data', data],
    ['serve', '--demo', '--json', '--port', takenPort, '--host', '127.0.0.1', '--data', data],
  ]) {
    const r = flagwire(argv);
    t.equal(r.code, 2, `${argv.join(' ')}: exit 2`);
    t.match(r.stderr, new RegExp(`^flagwire: invalid FLAGWIRE_PORT \\(--port\\): 127\\.0\\.0\\.1:${takenPort} is already in use`));
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    // serve makes a missing data directory as it reads its settings (docs/cli.md); nothing is written in it.
    t.strictSame(readdirSync(data), [], 'nothing written in the data directory');
    const run = sources(r.loaded);
    t.ok(run.ours.includes('cli/bundle/serve/main.js'), "serve's bundle loaded");
    t.strictSame(
      run.ours.filter((p) => /^cli\/bundle\/(writer|eval|events|frontend)\//.test(p)),
      [],
      "no thread started: no thread's bundle loaded",
    );
    const own = (await main(argv, io))!;
    t.strictSame([r.code, r.stdout, r.stderr], [own.code, own.stdout, own.stderr], `${argv.join(' ')}: main's answer`);
    t.strictSame(readdirSync(data), [], 'main wrote nothing there either');
  }
});

/**
 * The bin in processes of its own, each with `hook` (CommonJS source, which reports on stderr as the
 * process exits) required first; the scratch folder it is written in, removed when `t` ends.
 */
function hookedBin(t: Test, hook: string): { dir: string; run(args: string[], input?: string): SpawnSyncReturns<string> } {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-cli-hook-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'hook.cjs'), hook);
  return {
    dir,
    run: (args, input = '') =>
      spawnSync(process.execPath, ['--require', join(dir, 'hook.cjs'), kCli, ...args], { input, encoding: 'utf8' }),
  };
}

t.test('help and a store command make no stream of standard input: only `user password` reads it', async (t) => {
  // Node makes process.stdin's stream as the property is first read: the hook says whether it was.
  const bin = hookedBin(
    t,
    "const own = Object.getOwnPropertyDescriptor(process, 'stdin');\nlet read = false;\n" +
      "Object.defineProperty(process, 'stdin', { configurable: true, enumerable: own.enumerable, get() { read = true; return own.get.call(process); } });\n" +
      "process.on('exit', () => process.stderr.write('stdin read: ' + read + '\\n'));\n",
  );
  const run = (args: string[]) => bin.run([...args, '--data', join(bin.dir, 'data'), '--json'], 'a password of this test\n');
  for (const args of [['--help'], ['org', 'create', '--name', 'Stdin'], ['user', 'create', '--email', 'stdin@example.test']]) {
    const ran = run(args);
    t.equal(ran.status, 0, ran.stderr);
    t.match(ran.stderr, 'stdin read: false', `${args.slice(0, 2).join(' ')}: not read`);
  }
  // The hook sees a read where there is one: the password from standard input.
  const user = JSON.parse(run(['user', 'list']).stdout) as { users: { id: string }[] };
  const password = run(['user', 'password', user.users[0]!.id]);
  t.equal(password.status, 0, password.stderr);
  t.match(password.stderr, 'stdin read: true', 'user password: read');
});

t.test('help and a store command start no ES module loader: the bin and the bundle run from CommonJS', async (t) => {
  // What Node loads to read ES modules (their translators, a job per module), at the first one.
  const bin = hookedBin(
    t,
    "process.on('exit', () => process.stderr.write('esm: ' + process.moduleLoadList.filter((m) => /esm\\/(translators|module_job)$/.test(m)).join() + '\\n'));\n",
  );
  const data = join(bin.dir, 'data');
  for (const args of [
    ['--help'],
    ['org', 'create', '--name', 'Esm', '--data', data, '--json'],
    ['org', 'list', '--data', data, '--json'],
  ]) {
    const run = bin.run(args);
    t.equal(run.status, 0, run.stderr);
    t.match(run.stderr, /^esm: $/m, `${args.slice(0, 2).join(' ')}: none`);
  }
});

t.test('help loads no capability; a store command runs from the bundle without the server', async (t) => {
  const help = flagwire(['--help']);
  t.equal(help.code, 0);
  t.equal(help.stdout, (await main(['--help'], io))!.stdout, "main's help, byte for byte");
  const helpSources = sources(help.loaded);
  t.strictSame(
    helpSources.ours.filter((p) => !kEntryOwn.includes(p)),
    [],
    'help loads the bin alone (the entry, the parser and the error table in one file)',
  );
  t.strictSame([...helpSources.packages], [], 'and no npm package');

  const usage = flagwire(['flag', 'create', '--json']);
  const own = (await main(['flag', 'create', '--json'], io))!;
  t.strictSame([usage.code, usage.stdout, usage.stderr], [own.code, own.stdout, own.stderr], "a usage error: main's answer");

  const dir = mkdtempSync(join(tmpdir(), 'flagwire-cli-start-'));
  const created = flagwire(['org', 'create', '--name', 'Start', '--data', dir, '--json']);
  t.equal(created.code, 0, created.stderr);
  const listed = flagwire(['org', 'list', '--data', dir, '--json']);
  t.equal(listed.code, 0, listed.stderr);
  t.strictSame(
    JSON.parse(listed.stdout),
    JSON.parse((await main(['org', 'list', '--data', dir, '--json'], io))!.stdout),
    'the bundle reads what main reads',
  );
  t.match(JSON.parse(listed.stdout), { orgs: [{ id: JSON.parse(created.stdout).id, name: 'Start' }] });
  const run = sources(listed.loaded);
  t.ok(
    run.ours.some((p) => p.startsWith('cli/bundle/')),
    'the command runs from the bundle',
  );
  // Beside the entry's own modules, nothing: the bundle's CommonJS module has its own loader of the script.
  t.strictSame(
    run.ours.filter((p) => !p.startsWith('cli/bundle/') && !kEntryOwn.includes(p)),
    [],
    'and from no module outside it',
  );
  // The bundle is one script (scripts/build-cli.mjs): the capabilities' commands, routes and serve's
  // server are in it, and what a command never runs never runs (esbuild runs a module imported on use at
  // its first import, as Node would have loaded a piece). The packages only the server and the routes
  // import are required where their modules run, so a store command loads none of them.
  t.ok(
    run.ours.includes('cli/bundle/main.cjs') && run.ours.includes('cli/bundle/bundle-script.cjs'),
    "the command ran the bundle's script",
  );
  // lmdb and msgpackr run from a script of their own, which every thread of a node loads too.
  t.strictSame(
    run.ours.filter((p) => p.startsWith('cli/bundle/') && !['main.cjs', 'bundle-script.cjs', 'store-packages.cjs'].includes(p.slice(11))),
    [],
    "and no piece beside it but the store's packages",
  );
  t.ok(run.ours.includes('cli/bundle/store-packages.cjs'), "the store's packages run from their script");
  for (const name of ['uWebSockets.js', 'piscina', 'pino', 'pg', '@grpc/grpc-js', 'nodemailer']) {
    t.notOk(run.packages.has(name), `${name} is not loaded`);
  }
  t.ok(run.packages.has('lmdb'), 'the store is');
});
