// A capability's routes, console routes and command-line commands are loaded on use (OnUse,
// src/capability/capability.ts): every thread loads the capabilities' declarations, but only a front
// end loads their routes and only the command line their commands. The writer thread, which applies
// the commands and serves nothing, loads none of them (it loaded some 80 such modules before: issue 57,
// item 2). Seen by the module log (test/helpers/module-log.ts), which names every module any thread of
// the process loads.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { plainNode } from '../helpers/plain-process.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { kCli } from '../helpers/server.js';

const kModuleLog = fileURLToPath(new URL('../helpers/module-log.js', import.meta.url));
const kDist = new URL('../../src/', import.meta.url).href;
/**
 * The modules a node runs outside the bundles, by path under dist/src: the entry's own and serve's
 * settings check, which serve's bundle imports rather than copies, and what runs the bundles' scripts
 * (src/cli/bundle-script.ts), as the build derives them (scripts/build-cli.mjs).
 */
const kOutside = (JSON.parse(readFileSync(new URL('cli/bundle/outside-modules.json', kDist), 'utf8')) as { serve: string[] }).serve;
/**
 * Every module a capability's declaration imports on use (its routes, console routes, command-line
 * commands, background work and gRPC services), by path under dist/src: read from the declarations, so
 * a new capability's parts are counted as they are declared.
 */
const kOnUse = readdirSync(new URL('.', kDist), { withFileTypes: true }).flatMap((entry) => {
  const declaration = new URL(`${entry.name}/capability.js`, kDist);
  if (!entry.isDirectory() || !existsSync(declaration)) return [];
  return [...readFileSync(declaration, 'utf8').matchAll(/import\('(\.{1,2}\/[^']+\.js)'\)/g)].map(([, spec]) =>
    new URL(spec!, declaration).href.slice(kDist.length),
  );
});

/** Flagwire's own modules (paths under dist/src) that `script` loads in any of its threads, and its stdout. */
function loadedBy(script: string[]): { code: number | null; stdout: string; stderr: string; ours: string[] } {
  const r = spawnSync(process.execPath, ['--import', kModuleLog, ...script], { encoding: 'utf8' });
  const lines = r.stderr.split('\n');
  const ours = lines
    .filter((l) => l.startsWith(`loaded ${kDist}`))
    .map((l) => l.slice(`loaded ${kDist}`.length))
    .filter((path) => !path.startsWith('cli/bundle/'));
  return { code: r.status, stdout: r.stdout, stderr: lines.filter((l) => !l.startsWith('loaded ')).join('\n'), ours };
}

t.test("the writer thread loads the capabilities' records and commands, and none of their routes or command-line commands", async (t) => {
  const run = loadedBy([fileURLToPath(new URL('../helpers/writer-only.js', import.meta.url))]);
  t.equal(run.code, 0, run.stderr);
  t.match(JSON.parse(run.stdout), { name: 'Writer only' }, 'the writer committed a command');
  for (const path of ['writer/thread/actor.js', 'capabilities.js', 'flags/command-table.js', 'approvals/gate.js'])
    t.ok(run.ours.includes(path), `it loaded ${path}`);
  t.ok(kOnUse.length > 40, `the capabilities declare ${kOnUse.length} modules loaded on use`);
  t.ok(kOnUse.includes('flags/routes.js') && kOnUse.includes('flags/cli.js'), "the flags' routes and commands among them");
  t.strictSame(
    run.ours.filter((path) => kOnUse.includes(path)),
    [],
    'none of them: no route, console route, command-line command or background work',
  );
});

t.test('a front end loads every capability part it serves from the same declarations', async (t) => {
  // The other side of the rule, and the proof that the log above would name a part: the route table,
  // the console's JSON API and the command line's index load the parts they are derived from.
  const run = loadedBy([
    '--input-type=module',
    '-e',
    `await import(${JSON.stringify(`${kDist}all-routes.js`)}); await import(${JSON.stringify(`${kDist}web-console/api.js`)}); await import(${JSON.stringify(`${kDist}cli/commands.js`)});`,
  ]);
  t.equal(run.code, 0, run.stderr);
  for (const path of ['flags/routes.js', 'flags/console-routes.js', 'flags/cli.js', 'sync/service-routes.js', 'ofrep/routes.js'])
    t.ok(run.ours.includes(path), `${path} is loaded`);
});

t.test(
  "a node started from the command line's bundle runs its writer, evaluation and front-end threads from bundles, the writer without routes",
  async (t) => {
    // The writer thread's, an evaluation worker's and a front-end thread's entries are bundled as the
    // command line's is (scripts/build-cli.mjs): a few files instead of some 190, 75 and 300 modules. The
    // writer's routes and commands stay in pieces it never loads. Two front-end threads, whatever the
    // machine's default (one on two cores).
    const env: NodeJS.ProcessEnv = { ...process.env, FLAGWIRE_SYNC_PORT: '0', FLAGWIRE_LOG_LEVEL: 'warn', FLAGWIRE_HTTP_THREADS: '2' };
    delete env.FLAGWIRE_TEST_CAPABILITY;
    delete env.FLAGWIRE_DATA;
    const [file, args] = plainNode(['--import', kModuleLog, kCli, 'serve', '--port', '0', '--data', scratchDir('flagwire-parts-')]);
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // 'close', not 'exit': the child's last lines on stderr (its threads' loads) may still be in the pipe at its exit.
    const exited = new Promise((resolve) => child.once('close', resolve));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
        if (found !== undefined) resolve(Number(found));
      });
      child.once('exit', (code) => reject(new Error(`the node exited (${code}) before listening: ${stderr}`)));
    });
    // Polled: /ready answers 200 once every evaluation worker has answered a probe (and so loaded its
    // evaluators), however busy the machine.
    let status = 0;
    for (const deadline = Date.now() + 60_000; status !== 200 && Date.now() < deadline; ) {
      status = await fetch(`http://127.0.0.1:${port}/ready`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(status, 200, 'the node is ready');
    child.kill('SIGTERM');
    await exited;
    const loaded = stderr
      .split('\n')
      .filter((l) => l.startsWith(`loaded ${kDist}`))
      .map((l) => l.slice(`loaded ${kDist}`.length));
    t.ok(loaded.includes('cli/bundle/writer/actor.cjs'), "the writer thread ran from the writer's bundle (its CommonJS module)");
    t.ok(
      loaded.includes('cli/bundle/frontend/frontend-thread.cjs'),
      "the front-end threads ran from the front end's bundle (its CommonJS module)",
    );
    t.notOk(loaded.includes('server/frontend-thread.js'), 'not from its modules');
    // The absences below mean something only if the log names a package's modules whichever way a thread
    // loads one on use: import() (DuckDB's: src/events/export.ts) reaches the module hooks, require()
    // (re2js's and ipaddr.js's: src/load-on-use.ts) the wrapped Module._load (test/helpers/module-log.ts).
    // Each by one exact line: uWebSockets.js's entry, which the main and front-end threads import on use,
    // and the module piscina's worker file requires first, in each evaluation worker.
    const lines = new Set(stderr.split('\n'));
    t.ok(lines.has(`loaded ${import.meta.resolve('uWebSockets.js')}`), "the log names a package's module imported on use (uWebSockets.js)");
    const piscina = pathToFileURL(createRequire(import.meta.url).resolve('piscina'));
    t.ok(lines.has(`loaded ${new URL('symbols.js', piscina).href}`), "the log names a package's module required (piscina's symbols.js)");
    t.notOk(
      stderr.includes('node_modules/@duckdb/'),
      'no thread loaded DuckDB: the first Parquet export imports it (src/events/export.ts)',
    );
    t.notOk(stderr.includes('node_modules/re2js/'), 'no thread loaded re2js: the first REGEX constraint compiled loads it');
    t.notOk(stderr.includes('node_modules/ipaddr.js/'), 'no thread loaded ipaddr.js: the first webhook address judged loads it');
    // The sync service is off here (FLAGWIRE_SYNC_PORT=0): no thread loads the gRPC server's built-ins
    // (src/sync/background.ts). The log names a built-in that a module run on use requires, as the webhook
    // deliverer's node:https, which every node starts.
    t.ok(lines.has('loaded node:https'), 'the log names a built-in required on use (node:https)');
    for (const name of ['node:http2', 'node:zlib'])
      t.notOk(lines.has(`loaded ${name}`), `no thread loaded ${name}: the sync service is off`);
    // A node started on a fresh data dir checks no data file and repairs no start, and has sent no webhook.
    t.notOk(lines.has('loaded node:child_process'), 'no thread loaded node:child_process: the store check and repair load it (src/store)');
    t.notOk(lines.has('loaded node:dns/promises'), "no thread loaded node:dns/promises: a delivery's first look-up loads it");
    t.notOk(loaded.includes('writer/thread/actor.js'), 'not from its modules');
    // An evaluation worker's evaluators are in its bundle's script (scripts/build-cli.mjs), which no module
    // hook sees: the node was ready, so each worker had answered with them, and none came from its module.
    for (const entry of ['ofrep-evaluator.js', 'evaluation-api-evaluator.js', 'frontend-evaluator.js'])
      t.notOk(
        loaded.some((path) => path.endsWith(`/${entry}`)),
        `no evaluation worker loaded ${entry} from its module: it ran the one in its bundle`,
      );
    t.ok(
      kOutside.includes('cli/flagwire.cjs') && kOutside.includes('cli/serve-config.js') && kOutside.includes('cli/bundle-script.js'),
      "the build names the entry, the settings check and what runs the bundles' scripts",
    );
    t.strictSame(
      [...new Set(loaded.filter((path) => !path.startsWith('cli/bundle/')))].sort(),
      kOutside,
      "no thread ran a module outside the bundles but the entry's own, serve's settings check and the scripts' runner, as the build derives them",
    );
    // The writer's routes and commands are in its script but run only on use, as the modules' are (the
    // first test): no piece of them is a file of its own to load any more.
    t.strictSame(
      readdirSync(new URL('cli/bundle/writer/', kDist)).filter((name) => /\.c?js$/.test(name)),
      ['actor.cjs', 'actor.script.js'],
      "the writer's bundle is its script and what runs it, no pieces",
    );
    t.ok(
      loaded.includes('cli/bundle/writer/actor.cjs') && loaded.includes('cli/bundle/bundle-script.cjs'),
      'the writer ran its bundle as a script, from CommonJS',
    );
    t.strictSame(
      [...new Set(loaded.filter((path) => path.startsWith('cli/bundle/') && !/^cli\/bundle\/(writer|eval|frontend)\//.test(path)))].sort(),
      [
        'cli/bundle/bundle-script.cjs',
        'cli/bundle/pino.cjs',
        'cli/bundle/piscina.cjs',
        'cli/bundle/serve/main.js',
        'cli/bundle/store-packages.cjs',
        'cli/bundle/store-packages.js',
        'cli/bundle/uws.cjs',
      ],
      "the main thread ran from the one file of serve, routes and all, every thread from the store packages' script (the threads started from CommonJS by its twin), the main and front-end threads from pino's and piscina's one file each, and the front-end threads uWebSockets.js's addon from its CommonJS twin",
    );
    t.notOk(stderr.includes('node_modules/pino/'), "no thread loaded pino's own files");
    // piscina's worker file is its own, found from piscina's place (scripts/build-cli.mjs, kPackagePaths).
    t.notOk(/node_modules\/piscina\/dist\/(main|index)\.js/.test(stderr), "no thread loaded piscina's own pool");
    t.ok(stderr.includes('node_modules/piscina/dist/worker.js'), "each evaluation worker ran piscina's own worker file");
    // lmdb and msgpackr, with what they require, are one script V8 caches (scripts/build-cli.mjs,
    // kStorePackages); only their native addons and the package files those are found by load apart.
    t.ok(
      loaded.filter((path) => /^cli\/bundle\/store-packages\.c?js$/.test(path)).length >= 3,
      "the main, writer and evaluation threads ran the store packages' script",
    );
    for (const name of [
      'lmdb',
      'msgpackr',
      'msgpackr-extract',
      'weak-lru-cache',
      'ordered-binary',
      'detect-libc',
      'node-gyp-build-optional-packages',
    ])
      t.notOk(new RegExp(`node_modules/${name}/.*\\.c?js\\n`).test(stderr), `no thread loaded ${name}'s own files`);
  },
);
