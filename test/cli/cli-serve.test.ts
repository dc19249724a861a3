// The console against a running server's data dir (design §3: "safely while the server runs"): a
// token made by the CLI works at once, a revoke by the CLI takes effect at once (design §1), and the
// server's token activity, denials and mail are what `token activity` and `mail list` read.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { cli, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';

/** Polls `fn` until it returns a value, for at most `ms` (the server flushes activity once a second; the bound only catches a hang). */
async function eventually<T>(fn: () => Promise<T | undefined>, ms = 60_000): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

t.test('serve: the CLI changes tokens while the server runs; the server sees each change at once', async (t) => {
  const dir = tempDir(t);
  const server = await startTestServer({ demo: true, dataDir: dir });
  t.teardown(() => server.stop());

  const dump = await exportStore(dir);
  const owner = dump.users!.map(([, u]) => u as { id: string; email: string }).find((u) => u.email === 'owner@demo.flagwire.test')!;
  const shop = dump.projects!.map(([, p]) => p as { id: string; name: string }).find((p) => p.name === 'Web shop')!;
  t.ok(owner && shop, 'the demo owner and project are in the data dir');

  const token = await ok(t, dir, ['token', 'create', shop.id, '--as', owner.id, '--name', 'from-cli', '--permission', 'read']);
  const described = await call(server.baseUrl, 'GET', '/api/v1/token', { token: token.secret });
  t.equal(described.status, 200, 'a token made by the CLI works on the next request');
  t.match(described.json, { id: token.id, name: 'from-cli', permission: 'read', project: { id: shop.id } });

  const used = await eventually(async () => {
    const r = await cli(dir, ['token', 'activity', token.id]);
    return r.json.lastUsedAt === null ? undefined : r.json;
  });
  t.match(
    used,
    { tokenId: token.id, lastUsedAt: Number, recent: [{ method: 'GET', path: '/api/v1/token', status: 200 }], denials: [] },
    'token activity shows the request',
  );

  await ok(t, dir, ['token', 'revoke', token.id, '--as', owner.id]);
  const refused = await call(server.baseUrl, 'GET', '/api/v1/token', { token: token.secret });
  t.equal(refused.status, 401, 'a revoke by the CLI takes effect on the next request');
  t.equal(refused.json.error, 'Token revoked');

  const denied = await eventually(async () => {
    const r = await cli(dir, ['token', 'activity', token.id]);
    return r.json.denials.length === 0 ? undefined : r.json;
  });
  t.equal(denied?.denials.length, 1, "the refused request is on the token's activity");
  const mail = await eventually(async () => {
    const r = await cli(dir, ['mail', 'list']);
    return r.json.messages.length === 0 ? undefined : r.json;
  });
  t.match(
    mail?.messages[0],
    { seq: 1, to: 'owner@demo.flagwire.test', subject: String, text: String, at: Number },
    'the creator is mailed',
  );

  const list = await ok(t, dir, ['token', 'list', shop.id]);
  t.equal(list.tokens.length, 3, 'the two demo tokens and the revoked one');
  t.equal(await server.stop(), 0);
});

t.test('serve: bad --port and --host flags are configuration errors (exit 2, one line)', async (t) => {
  for (const args of [
    ['--port', '70000'],
    ['--port', 'http'],
    ['--host', ''],
  ]) {
    const r = await cli(null, ['serve', ...args], { json: false, env: { FLAGWIRE_DATA: '/nonexistent-flagwire-test-dir-never-used' } });
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, /^flagwire: invalid FLAGWIRE_(PORT|HOST): /);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test('serve: a bad FLAGWIRE_TRUSTED_PROXIES entry is a configuration error naming the setting and the entry', async (t) => {
  const env = { FLAGWIRE_DATA: '/nonexistent-flagwire-test-dir-never-used', FLAGWIRE_TRUSTED_PROXIES: '10.0.0.0/8, proxy.internal' };
  const r = await cli(null, ['serve'], { json: false, env });
  t.equal(r.code, 2);
  t.equal(r.stderr, 'flagwire: invalid FLAGWIRE_TRUSTED_PROXIES: "proxy.internal" is not an IPv4 or IPv6 address or CIDR range\n');
});
