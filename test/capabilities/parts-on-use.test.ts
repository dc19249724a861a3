// A capability's routes, console routes and command-line commands are loaded on use (OnUse,
// src/capability/capability.ts): every thread loads the capabilities' declarations, but only a front
// end loads their routes and only the command line their commands. The writer thread, which applies
// the commands and serves nothing, loads none of them (it loaded some 80 such modules before: issue 57,
// item 2). Seen by the module log (test/helpers/module-log.ts), which names every module any thread of
// the process loads.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kModuleLog = fileURLToPath(new URL('../helpers/module-log.js', import.meta.url));
const kDist = new URL('../../src/', import.meta.url).href;
/** A module of a capability's part loaded on use: its routes (Management API, service, hosted, console) or its commands. */
const kPartModule = /(^|\/)([\w-]*routes|cli)\.js$/;

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
  for (const path of ['writer-thread/actor.js', 'capabilities.js', 'flags/command-table.js', 'approvals/gate.js'])
    t.ok(run.ours.includes(path), `it loaded ${path}`);
  t.strictSame(
    run.ours.filter((path) => kPartModule.test(path)),
    [],
    'no route, console route or command-line module',
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
  for (const path of ['flags/routes.js', 'flags/console-routes.js', 'flags/cli.js', 'sync/routes.js', 'ofrep/routes.js'])
    t.ok(run.ours.includes(path), `${path} is loaded`);
});
