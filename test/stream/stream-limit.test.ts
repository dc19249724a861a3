// FLAGWIRE_STREAM_MAX_CONNECTIONS: the change streams one front end keeps open at once (issue 45: a
// relay holds many thousands; the bound is a setting). With 2, two streams are served, a third is
// refused 503 in the error envelope before any event, and a slot freed by a client that leaves is
// served again. A value out of range is a configuration error at start-up.
import { rmSync } from 'node:fs';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';

const world = buildEvalWorld();
const { ids } = world;
const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_STREAM_MAX_CONNECTIONS: '2' } });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

const kPath = `/v1/stream/project/${ids.single}`;

/** Opens a stream and reads until the server's hello; the abort closes it. */
async function open(): Promise<AbortController> {
  const ac = new AbortController();
  const res = await fetch(`${server.baseUrl}${kPath}`, { signal: ac.signal });
  if (res.status !== 200) throw new Error(`stream refused: ${res.status}`);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(': connected\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  return ac;
}

t.test('two streams are served, a third is refused 503, a freed slot is served again', async (t) => {
  const first = await open();
  const second = await open();
  const refused = await fetch(`${server.baseUrl}${kPath}`);
  t.equal(refused.status, 503);
  t.same(await refused.json(), {
    error: 'Service unavailable',
    detail: 'Too many open change streams on this server; retry later.',
  });
  first.abort();
  // The server hears the close on its own time: retry until the slot is free (a minute only catches a hang).
  const deadline = Date.now() + 60_000;
  let third: AbortController | null = null;
  while (third === null && Date.now() < deadline) {
    third = await open().catch(() => null);
    if (third === null) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(third !== null, 'the freed slot serves a new stream');
  second.abort();
  third?.abort();
});

t.test('FLAGWIRE_STREAM_MAX_CONNECTIONS out of range is a configuration error', async (t) => {
  const base = { FLAGWIRE_DATA: tempDataDir() };
  t.teardown(() => rmSync(base.FLAGWIRE_DATA, { recursive: true, force: true }));
  for (const value of ['0', '1000001', 'many']) {
    t.throws(() => loadConfig({}, { ...base, FLAGWIRE_STREAM_MAX_CONNECTIONS: value }), /FLAGWIRE_STREAM_MAX_CONNECTIONS/, value);
  }
  t.equal(loadConfig({}, base).streamMaxConnections, 10_000);
});
