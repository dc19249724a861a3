// Black-box: a relay's settings and data dir (issue 45), with no upstream to follow. `--upstream URL
// --upstream-token SECRET` (or FLAGWIRE_UPSTREAM_URL / FLAGWIRE_UPSTREAM_TOKEN) make a relay; one without
// the other, a URL that is not http(s), --database or a flag file beside it are configuration errors
// (one line, exit 2). A data dir holding data of its own is refused; an empty one becomes the relay's,
// and is then refused to a node that is not its relay. A relay that holds nothing is not ready, says why,
// and already refuses the Management API and the console, naming its upstream.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { call } from '../helpers/http.js';
import { plainNode } from '../helpers/plain-process.js';
import { pollUntil } from '../helpers/poll.js';
import { kCli, startTestServer, tempDataDir } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { buildWorld } from '../helpers/world.js';

/** `serve` with `args` and `env`, expected to stop at start-up: its exit code and stderr. */
function refusedStart(args: string[], env: Record<string, string>): { status: number | null; stderr: string } {
  const r = spawnSync(...plainNode([kCli, 'serve', '--port', '0', '--host', '127.0.0.1', ...args]), {
    env: { ...process.env, FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_SYNC_PORT: '0', FLAGWIRE_DATA: tempDataDir(), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr };
}

t.test('relay settings that cannot be used stop start-up with one line naming the setting, exit 2', async (t) => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--upstream', 'http://127.0.0.1:1'], {}, /FLAGWIRE_UPSTREAM_TOKEN \(--upstream-token\).*relay key/],
    [[], { FLAGWIRE_UPSTREAM_TOKEN: 'fwr_x' }, /FLAGWIRE_UPSTREAM_URL \(--upstream\)/],
    [['--upstream', 'ftp://127.0.0.1:1', '--upstream-token', 'fwr_x'], {}, /FLAGWIRE_UPSTREAM_URL.*http:\/\/ or https:\/\//],
    [['--upstream', 'not a url', '--upstream-token', 'fwr_x'], {}, /FLAGWIRE_UPSTREAM_URL.*not a URL/],
    [
      ['--upstream', 'http://127.0.0.1:1', '--upstream-token', 'fwr_x', '--database', 'postgres://u:p@127.0.0.1:1/db'],
      {},
      /FLAGWIRE_UPSTREAM_URL.*either --upstream.*or --database/,
    ],
    [
      [],
      {
        FLAGWIRE_UPSTREAM_URL: 'http://127.0.0.1:1',
        FLAGWIRE_UPSTREAM_TOKEN: 'fwr_x',
        FLAGWIRE_DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db',
      },
      /not both/,
    ],
    [
      ['--upstream', 'http://127.0.0.1:1', '--upstream-token', 'fwr_x', '--flags-file', '/tmp/x.yaml', '--flags-project', 'prj_x'],
      {},
      /FLAGWIRE_FLAGS_FILE.*a relay applies nothing/,
    ],
  ];
  for (const [args, env, expected] of cases) {
    const r = refusedStart(args, env);
    t.equal(r.status, 2, `exit 2: ${args.join(' ')} ${JSON.stringify(env)} (${r.stderr})`);
    t.match(r.stderr, expected);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test('a data dir with data of its own cannot become a relay; nothing in it changes', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  await world.store.close();
  const r = refusedStart(['--data', dataDir, '--upstream', 'http://127.0.0.1:1', '--upstream-token', 'fwr_x'], {});
  t.equal(r.status, 2, r.stderr);
  t.match(r.stderr, /FLAGWIRE_UPSTREAM_URL.*holds data of its own.*empty data directory/);
  // The embedded node starts on it as before, with its data: its tokens work.
  const node = await startTestServer({ dataDir });
  t.teardown(() => node.stop());
  const token = await call(node.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read });
  t.equal(token.status, 200, token.text);
});

t.test('an empty data dir becomes a relay: not ready while it holds nothing, and it refuses changes naming its upstream', async (t) => {
  const dataDir = tempDataDir();
  // Nothing listens there: the relay keeps trying, and says so.
  const upstream = `http://127.0.0.1:${await freePort()}`;
  const env = { FLAGWIRE_UPSTREAM_URL: upstream, FLAGWIRE_UPSTREAM_TOKEN: 'fwr_unused' };
  const relay = await startTestServer({ dataDir, env });
  const ready = await pollUntil(
    'the relay says its upstream does not answer',
    () => call(relay.baseUrl, 'GET', '/ready'),
    (r) => typeof r.json?.relay?.problem === 'string',
  );
  t.equal(ready.status, 503);
  t.match(ready.json, {
    status: 'not ready',
    ready: false,
    relay: { upstream, holdsCopy: false, connected: false, revision: 0, lastHeardMsAgo: null, problem: /does not answer/ },
    detail: new RegExp(`this relay holds no copy of its upstream ${upstream.replace(/[.]/g, '\\.')} yet`),
  });
  const detail = `This node is a read-only relay of ${upstream}; send changes there`;
  for (const [method, path] of [
    ['GET', '/api/v1/flags'],
    ['POST', '/api/v1/flags'],
    ['PATCH', '/api/v1/flags/flg_x'],
    ['GET', '/api/v1/token'],
    ['GET', '/console'],
    ['GET', '/console/api/session'],
    ['POST', '/console/api/sign-in'],
  ] as const) {
    const r = await call(relay.baseUrl, method, path, { body: method === 'GET' ? undefined : {} });
    t.equal(r.status, 409, `${method} ${path}`);
    t.same(r.json, { error: 'Read-only relay', detail, docs: `${relay.baseUrl}/docs#read-only-relay` }, `${method} ${path}`);
  }
  t.notMatch(relay.logs(), /"level":50/, 'nothing logged as an error: the upstream is away, no key was refused');
  t.equal(await relay.stop(), 0);

  // The data dir is the relay's now: a node that is not its relay is refused, naming the setting.
  const plain = refusedStart(['--data', dataDir], {});
  t.equal(plain.status, 2, plain.stderr);
  t.match(plain.stderr, /FLAGWIRE_UPSTREAM_URL.*a relay's copy of another Flagwire node.*--upstream URL --upstream-token SECRET/);
  const pg = refusedStart(['--data', dataDir, '--database', 'postgres://u:p@127.0.0.1:1/db'], {});
  t.equal(pg.status, 2, pg.stderr);
  t.match(pg.stderr, /FLAGWIRE_DATABASE_URL.*a relay's copy of another Flagwire node/);
});
