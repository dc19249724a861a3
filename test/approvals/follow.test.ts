// A node following a flag file (`serve --flags-file`) of a guarded project (docs/approvals.md: "a node
// following a flag file: logs the request; the file's next change edits it"): a file turning a flag on
// is held as a change request, logged, and nothing served changes; the file's next change edits the
// same request; approved, the node serves what the file says.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { exportedFile } from '../helpers/flag-file-export.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids } = world;
const initial = exportedFile(world, ids.single);
await world.store.close();

const path = join(tempDir(t, 'flagwire-follow-'), 'flags.json');
/** Saves as an editor does: a new file renamed over the old one. */
function save(content: unknown): void {
  writeFileSync(`${path}.tmp`, fileText(content));
  renameSync(`${path}.tmp`, path);
}
const withBanner = (banner: Record<string, unknown>) => ({
  ...initial,
  flags: { ...initial.flags, banner: { ...initial.flags.banner, ...banner } },
});

const policy = await cli(dataDir, ['approvals', 'set', ids.single, '--required', '1', '--as', ids.admin]);
if (policy.code !== 0) throw new Error(policy.stdout);
save(initial);
const server = await startTestServer({
  dataDir,
  env: { FLAGWIRE_FLAGS_FILE: path, FLAGWIRE_FLAGS_PROJECT: ids.single, FLAGWIRE_LOG_LEVEL: 'info' },
});
t.teardown(() => server.stop());

const banner = async () => (await call(server.baseUrl, 'GET', `/v1/flags/${ids.flag2}?targetingKey=u1`)).json.enabled as boolean;
const pending = async (): Promise<any[]> =>
  (await cli(dataDir, ['request', 'list', ids.single, '--status', 'pending'])).json.changeRequests;
/** The log lines saying the file's change waits in a request. */
const requested = () =>
  server
    .logs()
    .split('\n')
    .filter((line) => line.includes('flags unchanged until it is approved'))
    .map((line) => JSON.parse(line));

t.test("the file's change is held as a request and logged; its next change edits it; approved, it is served", async (t) => {
  save(withBanner({ enabled: true, trafficPercentage: 100 }));
  const [first] = await pollUntil(
    'the request logged',
    async () => requested(),
    (lines) => lines.length === 1,
  );
  t.match(first, { changeRequest: /^chr_/, projectId: ids.single });
  t.equal(await banner(), false, 'nothing served changes');
  t.match(await pending(), [
    {
      id: first.changeRequest,
      diff: [
        { name: 'banner', field: 'enabled', proposed: true },
        { field: 'trafficPercentage', proposed: 100 },
      ],
    },
  ]);

  save(withBanner({ enabled: true, trafficPercentage: 100, description: 'follows the file' }));
  const lines = await pollUntil(
    'the edit logged',
    async () => requested(),
    (lines) => lines.length === 2,
  );
  t.equal(lines[1].changeRequest, first.changeRequest, 'the same request, edited');
  const [request] = await pending();
  t.equal(request.id, first.changeRequest);
  t.ok(request.diff.some((d: any) => d.field === 'description' && d.proposed === 'follows the file'));
  t.equal(await banner(), false);

  const approved = await cli(dataDir, ['request', 'approve', request.id, '--version', String(request.version), '--as', ids.owner]);
  t.equal(approved.code, 0, approved.stdout);
  t.equal(await banner(), true, 'served once approved');
});
