// Code references over the Management API against a real server, and `refs scan --push` at the command
// line: a write token pushes a branch's scan (replaced by the next push of that branch), a read token is
// refused, a body over the bound is refused before it is read; a flag's references are read back by
// key with a read token, and the keys code names that are no flags are listed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { codeReference } from '../helpers/code-reference.js';
import { call } from '../helpers/http.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startWorldServer } from '../helpers/world-server.js';

t.setTimeout(300_000);

const { server, world } = await startWorldServer(t);
const { secrets } = world;
const api = (method: string, path: string, token: string, body?: unknown) => call(server.baseUrl, method, path, { token, body });

const reference = codeReference;

t.test('a write token pushes a branch; the next push of it replaces it; a read token reads a flag back', async (t) => {
  const refused = await api('POST', '/api/v1/code-refs', secrets.read, {
    repository: 'shop',
    branch: 'main',
    commit: 'a1',
    references: [],
  });
  t.equal(refused.status, 403, refused.text);
  t.match(refused.json, { error: 'Insufficient permission' });

  const first = {
    repository: 'shop',
    branch: 'main',
    commit: 'a1',
    references: [reference('checkout', 3), reference('no-such-flag', 9), reference(null, 12)],
  };
  const pushed = await api('POST', '/api/v1/code-refs', secrets.write, first);
  t.equal(pushed.status, 200, pushed.text);
  t.match(pushed.json, { repository: 'shop', branch: 'main', commit: 'a1', pushedAt: Number, references: 3, flags: 2 });
  const other = { repository: 'shop', branch: 'feature-x', commit: 'b7', references: [reference('checkout', 5)] };
  t.equal((await api('POST', '/api/v1/code-refs', secrets.write, other)).status, 200);

  const read = await api('GET', '/api/v1/code-refs?flag=checkout', secrets.read);
  t.equal(read.status, 200, read.text);
  t.match(read.json, { flag: 'checkout', exists: true });
  t.strictSame(
    read.json.branches.map((b: { branch: string; commit: string; references: { line: number }[] }) => [
      b.branch,
      b.commit,
      b.references.map((r) => r.line),
    ]),
    [
      ['feature-x', 'b7', [5]],
      ['main', 'a1', [3]],
    ],
  );

  const missing = await api('GET', '/api/v1/code-refs/missing', secrets.read);
  t.equal(missing.status, 200, missing.text);
  t.strictSame(missing.json, { missing: [{ key: 'no-such-flag', references: 1, branches: ['shop@main'] }], unknown: 1 });

  // The next push of main replaces its scan whole.
  const second = { ...first, commit: 'a2', references: [reference('banner', 4)] };
  t.equal((await api('POST', '/api/v1/code-refs', secrets.write, second)).status, 200);
  const after = await api('GET', '/api/v1/code-refs?flag=checkout', secrets.read);
  t.strictSame(
    after.json.branches.map((b: { branch: string }) => b.branch),
    ['feature-x'],
    'main no longer names checkout',
  );
  t.strictSame((await api('GET', '/api/v1/code-refs/missing', secrets.read)).json, { missing: [], unknown: 0 });

  const otherProject = await api('GET', '/api/v1/code-refs?flag=checkout', secrets.writeB);
  t.strictSame(otherProject.json.branches, [], "another project's token sees none of them");
  const noFlag = await api('GET', '/api/v1/code-refs', secrets.read);
  t.equal(noFlag.status, 400, noFlag.text);
});

t.test('a push is checked: its shape, and a body over 1 MiB refused unread', async (t) => {
  const bad = await api('POST', '/api/v1/code-refs', secrets.write, { repository: 'shop', branch: 'main', references: [{ file: 'a' }] });
  t.equal(bad.status, 400, bad.text);
  t.match(bad.json, { error: 'Invalid request', detail: /commit/ });
  const padding = 'x'.repeat(200);
  const huge = {
    repository: 'shop',
    branch: 'big',
    commit: 'c',
    references: Array.from({ length: 6000 }, (_, i) => ({ ...reference('checkout', i + 1), context: [padding] })),
  };
  const tooLarge = await api('POST', '/api/v1/code-refs', secrets.write, huge);
  t.equal(tooLarge.status, 413, tooLarge.text.slice(0, 200));
  t.match(tooLarge.json, { error: 'Request body too large' });
  const read = await api('GET', '/api/v1/code-refs?flag=checkout', secrets.read);
  t.notOk(
    read.json.branches.some((b: { branch: string }) => b.branch === 'big'),
    'nothing stored',
  );
});

t.test('refs scan --push scans a folder and pushes it for the branch and commit given', async (t) => {
  const dir = tempDir(t, 'flagwire-code-refs-push-');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'pay.py'), 'BANNER = "banner"\nif client.get_boolean_value(BANNER, False):\n    pass\n');
  const scanPush = (token: string, ...place: string[]) =>
    cli(null, ['refs', 'scan', dir, '--push', '--url', server.baseUrl, '--token', token, ...place]);
  const out = await scanPush(secrets.write, '--repository', 'pay', '--branch', 'release', '--commit', 'd4');
  t.equal(out.code, 0, out.stderr);
  t.match(out.json, {
    filesScanned: 1,
    references: [{ file: 'src/pay.py', line: 2, kind: 'constant', key: 'banner' }],
    pushed: { repository: 'pay', branch: 'release', references: 1 },
  });
  const read = await api('GET', '/api/v1/code-refs?flag=banner', secrets.read);
  t.match(
    read.json.branches.find((b: { repository: string }) => b.repository === 'pay'),
    { branch: 'release', commit: 'd4', references: [{ file: 'src/pay.py', line: 2 }] },
  );

  const refusedPush = await scanPush(secrets.read, '--branch', 'x', '--commit', 'y');
  t.not(refusedPush.code, 0, 'a read token is refused');
  t.match(refusedPush.json, { detail: /403/ });
});
