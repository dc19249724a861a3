// Black-box: a relay whose port cannot be bound stops as a plain node does (issue 55, item 5): one line
// on stderr naming the setting, exit 2, nothing listening. Start-up tries both ports before it starts
// anything (src/server/listen.ts); a port taken after that try is found at listening, when the
// relay's follower is discovering or following its live upstream: a follower that opened its stream
// after the stop kept the process alive for ever, logging "following the upstream". That path is
// reached with the try switched off (FLAGWIRE_TEST_PORTS_UNTRIED).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import t from 'tap';
import { plainNode } from '../helpers/plain-process.js';
import { kCli, startTestServer, tempDataDir } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { createRelayKey } from './support.js';

const upstream = await startTestServer({ syncPort: 'free' });
t.teardown(() => upstream.stop());
const key = await createRelayKey(upstream.dataDir, 'ports');

/** A relay of the upstream started with `env`, expected to stop: its exit code and what it printed (a minute catches a hang). */
function relayStart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(...plainNode([kCli, 'serve', '--host', '127.0.0.1']), {
      env: {
        ...process.env,
        FLAGWIRE_DATA: tempDataDir(),
        FLAGWIRE_EVAL_WORKERS: '1',
        FLAGWIRE_UPSTREAM_URL: upstream.baseUrl,
        FLAGWIRE_UPSTREAM_TOKEN: key.secret,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const hang = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.once('exit', (code) => {
      clearTimeout(hang);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The error line: the one stderr line that is not the JSON log. */
const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'));

t.test('a relay whose sync port is taken exits 2 naming FLAGWIRE_SYNC_PORT, and never listens', async (t) => {
  const r = await relayStart({ FLAGWIRE_PORT: String(await freePort()), FLAGWIRE_SYNC_PORT: String(upstream.syncPort) });
  t.equal(r.code, 2, `exit 2 (stderr: ${r.stderr})`);
  const lines = errorLines(r.stderr);
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /invalid FLAGWIRE_SYNC_PORT/);
  t.match(lines[0], new RegExp(`127\\.0\\.0\\.1:${upstream.syncPort} is already in use`));
  t.notMatch(r.stdout, /listening/);
});

t.test('a relay whose HTTP port is taken exits 2 naming FLAGWIRE_PORT', async (t) => {
  const r = await relayStart({ FLAGWIRE_PORT: String(upstream.port), FLAGWIRE_SYNC_PORT: String(await freePort()) });
  t.equal(r.code, 2, `exit 2 (stderr: ${r.stderr})`);
  const lines = errorLines(r.stderr);
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /FLAGWIRE_PORT/);
  t.match(lines[0], new RegExp(`127\\.0\\.0\\.1:${upstream.port} is already in use`));
  t.notMatch(r.stdout, /listening/);
});

t.test('a port found taken at listening, after start-up tried it, stops the relay the same way, its follower too', async (t) => {
  const cases = [
    {
      env: { FLAGWIRE_PORT: String(await freePort()), FLAGWIRE_SYNC_PORT: String(upstream.syncPort) },
      setting: 'FLAGWIRE_SYNC_PORT',
      port: upstream.syncPort,
    },
    {
      env: { FLAGWIRE_PORT: String(upstream.port), FLAGWIRE_SYNC_PORT: String(await freePort()) },
      setting: 'FLAGWIRE_PORT',
      port: upstream.port,
    },
  ];
  for (const { env, setting, port } of cases) {
    const data = tempDataDir();
    const r = await relayStart({ ...env, FLAGWIRE_DATA: data, FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_PORTS_UNTRIED: '1' });
    t.equal(r.code, 2, `${setting}: exit 2 (stderr: ${r.stderr})`);
    const lines = errorLines(r.stderr);
    t.equal(lines.length, 1, 'one line');
    t.match(lines[0], new RegExp(`invalid ${setting}`));
    t.match(lines[0], new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
    t.notMatch(r.stdout, /listening/);
    t.ok(readdirSync(data).includes('flagwire.mdb'), 'found at listening: the relay had opened its copy and started');
  }
});
