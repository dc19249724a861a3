// `serve --flags-file PATH --flags-project ID` (issue 26, item 4), run as users run it: the node applies
// the file when it starts and each time its content changes (a save by rename included), as apply
// --prune does; a file it cannot apply is refused and logged, and the served flags stay as they were.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { exportedFile } from '../helpers/flag-file-export.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids } = world;
const initial = exportedFile(world, ids.single);
await world.store.close();

const dir = tempDir(t, 'flagwire-follow-');
const path = join(dir, 'flags.json');

/** Saves as an editor does: a new file renamed over the old one. */
function save(content: unknown): void {
  writeFileSync(`${path}.tmp`, typeof content === 'string' ? content : fileText(content));
  renameSync(`${path}.tmp`, path);
}

const withBanner = (banner: Record<string, unknown>) => ({
  ...initial,
  flags: { ...initial.flags, banner: { ...initial.flags.banner, ...banner } },
});

/** Polls until `ok` holds; the bound only catches a node that never follows (a loaded machine is slow, not stuck). */
async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const evaluate = async (baseUrl: string, id: string) => call(baseUrl, 'GET', `/v1/flags/${id}?targetingKey=u1`);

// The file at start already differs from the store: the first answers reflect it.
save(withBanner({ enabled: true, trafficPercentage: 100 }));
const server = await startTestServer({
  dataDir,
  env: { FLAGWIRE_FLAGS_FILE: path, FLAGWIRE_FLAGS_PROJECT: ids.single, FLAGWIRE_LOG_LEVEL: 'info' },
});
t.teardown(() => server.stop());

t.test('the file is applied before the node listens', async (t) => {
  const reply = await evaluate(server.baseUrl, ids.flag2);
  t.equal(reply.status, 200);
  t.equal(reply.json.enabled, true, 'banner is on, as the file says');
  t.match(server.logs(), /flag file applied/);
});

t.test('a changed file is applied; a refused one is logged and changes nothing', async (t) => {
  save(withBanner({ enabled: false, trafficPercentage: 0 }));
  await until('banner off', async () => (await evaluate(server.baseUrl, ids.flag2)).json.enabled === false);

  save('{"flagwire": 1, "kind": "single", "flags": {"banner": {"enabled": true}}}');
  await until('the refusal logged', async () => /flag file refused/.test(server.logs()));
  t.match(server.logs(), /flags\.banner\.trafficPercentage is required/, 'the log names the place');
  t.equal((await evaluate(server.baseUrl, ids.flag2)).json.enabled, false, 'the served flag is as it was');

  // A file the node cannot apply does not stop it following: the next good one is applied.
  save(withBanner({ enabled: true, trafficPercentage: 100 }));
  await until('banner on again', async () => (await evaluate(server.baseUrl, ids.flag2)).json.enabled === true);
});

t.test('a flag the file no longer names is deleted (the file is the whole truth: apply --prune)', async (t) => {
  const { banner: _dropped, ...rest } = initial.flags;
  save({ ...initial, flags: rest });
  await until('banner deleted', async () => (await evaluate(server.baseUrl, ids.flag2)).status === 404);
  t.equal((await evaluate(server.baseUrl, ids.flag)).status, 200, 'the flags it names stay');
});

t.test('a project that does not exist stops the node at start, naming the setting', async (t) => {
  await t.rejects(
    startTestServer({ env: { FLAGWIRE_FLAGS_FILE: path, FLAGWIRE_FLAGS_PROJECT: 'prj_nope' } }),
    /exited with 2[\s\S]*FLAGWIRE_FLAGS_PROJECT \(--flags-project\): no project prj_nope exists/,
  );
  await t.rejects(startTestServer({ env: { FLAGWIRE_FLAGS_PROJECT: ids.single } }), /FLAGWIRE_FLAGS_FILE \(--flags-file\)/);
});
