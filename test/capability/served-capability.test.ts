// Black-box: the test-only capability (test/helpers/widget-capability.ts) run by real processes, with no
// line of Flagwire's naming it (FLAGWIRE_TEST_CAPABILITY lists it after Flagwire's own, as its one
// registration line would: src/capabilities.ts). A server answers its routes (a write through the writer,
// refused bodies changing nothing, a read) and lists its route and schema in the OpenAPI document; its
// writes are audited under its action; the command line runs its command; a relay receives its relayed
// records through the change log and the full copy; deleting the flag a widget hangs off deletes the
// widget on the server and on the relay (docs/architecture.md, "Adding a capability"); a port its
// background work declares is tried at start-up as the sync port is.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import t from 'tap';
import { call } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { plainNode } from '../helpers/plain-process.js';
import { kCli, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import type { Widget } from '../helpers/widget-capability.js';
import { kWidgetsModule } from '../helpers/widgets.js';
import { buildWorld } from '../helpers/world.js';
import { startRelay, waitCaughtUp } from '../relay/support.js';

const env = { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_CAPABILITY: kWidgetsModule };
const upDir = tempDataDir();
const world = buildWorld(upDir);
const { ids, secrets } = world;
await world.store.close();
const upstream = await startTestServer({ dataDir: upDir, env, syncPort: 'free' });
const relayDir = tempDataDir();
let relay: TestServer | null = null;
t.teardown(async () => {
  await relay?.stop();
  await upstream.stop();
});

/** `flagwire ARGS` in a process of its own that runs with the widgets, on `dataDir`. */
const widgetCli = (dataDir: string, args: string[]) => cli(dataDir, args, { env, process: true });

/** The widgets `dataDir` holds, by the capability's command-line command, sorted by size. */
async function widgetsIn(dataDir: string): Promise<Widget[]> {
  const r = await widgetCli(dataDir, ['widget', 'list']);
  if (r.code !== 0) throw new Error(`widget list: ${r.stderr}`);
  return (r.json.widgets as Widget[]).sort((a, b) => a.size - b.size);
}

const made = await call(upstream.baseUrl, 'POST', '/api/v1/flags', { token: secrets.write, body: { name: 'widget-host' } });
if (made.status !== 201) throw new Error(`flag create: ${made.status} ${made.text}`);
const flagId: string = made.json.id;
let hanging: Widget;
let loose: Widget;

t.test('a server answers its routes, audits its writes, documents them, and its command reads them', async (t) => {
  const refused = await call(upstream.baseUrl, 'POST', '/api/v1/widgets', { token: secrets.write, body: { size: -1, colour: 'red' } });
  t.equal(refused.status, 400);
  t.match(refused.json, { error: 'Invalid request', detail: /unknown field "colour"/ });
  const unknownFlag = await call(upstream.baseUrl, 'POST', '/api/v1/widgets', {
    token: secrets.write,
    body: { size: 1, flagId: ids.flagB },
  });
  t.equal(unknownFlag.status, 404, "another project's flag is as missing as an unknown one");
  const readOnly = await call(upstream.baseUrl, 'POST', '/api/v1/widgets', { token: secrets.read, body: { size: 1 } });
  t.equal(readOnly.status, 403, 'a read token makes none');
  t.strictSame(
    (await call(upstream.baseUrl, 'GET', '/api/v1/widgets', { token: secrets.read })).json,
    { widgets: [] },
    'the refusals made nothing',
  );

  const first = await call(upstream.baseUrl, 'POST', '/api/v1/widgets', { token: secrets.write, body: { size: 3, flagId } });
  t.equal(first.status, 201, first.text);
  hanging = first.json;
  t.match(hanging, { id: /^wdg_/, size: 3, flagId });
  const second = await call(upstream.baseUrl, 'POST', '/api/v1/widgets', { token: secrets.write, body: { size: 5 } });
  t.equal(second.status, 201, second.text);
  loose = second.json;
  const listed = await call(upstream.baseUrl, 'GET', '/api/v1/widgets', { token: secrets.read });
  t.strictSame(
    (listed.json.widgets as Widget[]).sort((a, b) => a.size - b.size),
    [hanging, loose],
  );
  t.strictSame(await widgetsIn(upDir), [hanging, loose], 'its command-line command reads what the server wrote');

  const audit = await widgetCli(upDir, ['audit', ids.single]);
  t.equal(audit.code, 0, audit.stderr);
  const widgetEntries = (audit.json.entries as { action: string; flagId: string | null }[]).filter((e) => e.action === 'widget.create');
  t.strictSame(widgetEntries.map((e) => e.flagId).sort(), [flagId, null].sort(), 'each write audited under its action');

  const doc = await call(upstream.baseUrl, 'GET', '/api/v1/openapi.json');
  t.equal(doc.status, 200);
  t.ok(doc.json.components.schemas.Widget, 'its schema is a component of the OpenAPI document');
  t.ok(doc.json.paths['/api/v1/widgets'], 'its routes are paths of it');
});

t.test('a relay gets its relayed records, and loses the one that hangs off a deleted flag', async (t) => {
  const key = await widgetCli(upDir, ['relay', 'key', 'create', '--name', 'widgets-edge']);
  t.equal(key.code, 0, key.stderr);
  relay = await startRelay(upstream.baseUrl, key.json.secret, { dataDir: relayDir, env });
  await waitCaughtUp(relay, upstream, ids.single);
  // Read by the command line beside the running relay, as on any node.
  t.strictSame(await widgetsIn(relayDir), [hanging, loose], "the relay's first copy holds both");

  // Followed from here on: the deletion reaches the relay through the change log.
  const deleted = await widgetCli(upDir, ['flag', 'delete', flagId]);
  t.equal(deleted.code, 0, deleted.stderr);
  t.strictSame(
    (await call(upstream.baseUrl, 'GET', '/api/v1/widgets', { token: secrets.read })).json,
    { widgets: [loose] },
    'the server deleted it with its flag',
  );
  await waitCaughtUp(relay, upstream, ids.single);
  await relay.stop();
  relay = null;
  t.strictSame(await widgetsIn(relayDir), [loose], 'and so did the relay');
});

t.test('the port its background work declares is tried before anything starts, with no line of the server naming it', async (t) => {
  // Taken by this test; the server with the widgets is refused it before its writer opens the data directory.
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as AddressInfo).port;
  const data = tempDataDir();
  const r = spawnSync(...plainNode([kCli, 'serve', '--demo', '--host', '127.0.0.1', '--port', '0', '--data', data]), {
    env: { ...process.env, ...env, FLAGWIRE_SYNC_PORT: '0', FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_TEST_WIDGET_PORT: String(port) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.match(r.stderr, new RegExp(`^flagwire: invalid FLAGWIRE_TEST_WIDGET_PORT: 127\\.0\\.0\\.1:${port} is already in use`));
  t.equal(r.stdout, '', 'nothing seeded, nothing listening');
  t.strictSame(readdirSync(data), [], 'nothing written in the data directory');
});
