// The console's lifecycle page and its archive and restore, over HTTP against the real server (issue 99;
// docs/web-console.md: A project's lifecycle): every flag with its stage, archived ones too; an owner
// archives and restores; a viewer reads the page but is refused an archive, nothing written. Its code
// references: a viewer reads a flag's and the keys that are no flags; one outside the project gets 404.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { codeReference } from '../helpers/code-reference.js';
import { demoWithViewer } from '../helpers/demo-viewer.js';
import { call } from '../helpers/http.js';
import { consoleCall, demoSecret, setPassword, signIn } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';
const kShop = 'prj_DemoWebShop';
const { base, dir, server, owner, viewer } = await demoWithViewer(t);

t.test('the page lists every flag with its stage; archive moves one to archived; restore brings it back', async (t) => {
  const page = await consoleCall(base, owner, 'GET', `projects/${kPlatform}/lifecycle`);
  t.equal(page.status, 200);
  t.match(page.json, { project: { id: kPlatform }, can: { editFlags: true } });
  const flag = (page.json.flags as { id: string; name: string; stage: string; type: string }[])[0]!;
  t.not(flag.stage, 'archived');
  t.equal(flag.type, 'release', 'a demo flag made before types is a release flag');

  const refused = await consoleCall(base, viewer, 'POST', `flags/${flag.id}/archive`);
  t.equal(refused.status, 403, 'a viewer may not archive');
  const archived = await consoleCall(base, owner, 'POST', `flags/${flag.id}/archive`);
  t.equal(archived.status, 200, JSON.stringify(archived.json));
  t.type(archived.json.archivedAt, 'number');
  const after = await consoleCall(base, viewer, 'GET', `projects/${kPlatform}/lifecycle`);
  t.match(
    (after.json.flags as { id: string }[]).find((f) => f.id === flag.id),
    { stage: 'archived' },
    'listed as archived, to a viewer too',
  );
  const list = await consoleCall(base, owner, 'GET', `projects/${kPlatform}`);
  t.notOk(
    (list.json.flags as { id: string }[]).some((f) => f.id === flag.id),
    'the flag list leaves it out',
  );
  t.equal((await consoleCall(base, owner, 'POST', `flags/${flag.id}/restore`)).status, 200);
  t.ok((await consoleCall(base, owner, 'GET', `projects/${kPlatform}`)).json.flags.some((f: { id: string }) => f.id === flag.id));
});

t.test("a viewer reads a flag's code references and the keys that are no flags; a stranger gets 404", async (t) => {
  const ref = (key: string | null, line: number) => codeReference(key, line, { context: [] });
  const before = await consoleCall(base, viewer, 'GET', `projects/${kShop}/code-refs/missing`);
  t.strictSame(before.json, { scans: 0, missing: [], unknown: 0 }, 'never scanned');
  const pushed = await call(base, 'POST', '/api/v1/code-refs', {
    token: demoSecret(server.output(), 'demo-write'),
    body: { repository: 'shop', branch: 'main', commit: 'c1', references: [ref('holiday-banner', 3), ref('gone', 5), ref(null, 8)] },
  });
  t.equal(pushed.status, 200, pushed.text);
  const missing = await consoleCall(base, viewer, 'GET', `projects/${kShop}/code-refs/missing`);
  t.strictSame(missing.json, {
    scans: 1,
    missing: [{ key: 'gone', references: 1, places: [{ repository: 'shop', branch: 'main', file: 'src/app.ts', line: 5 }] }],
    unknown: 1,
  });
  const shop = await consoleCall(base, owner, 'GET', `projects/${kShop}`);
  const flagId = (shop.json.flags as { id: string; name: string }[]).find((f) => f.name === 'holiday-banner')!.id;
  const refs = await consoleCall(base, viewer, 'GET', `flags/${flagId}/code-refs`);
  t.equal(refs.status, 200, JSON.stringify(refs.json));
  t.match(refs.json, { scans: [{ repository: 'shop', branch: 'main', commit: 'c1' }], branches: [{ branch: 'main', commit: 'c1' }] });
  t.strictSame(
    (refs.json.branches[0].references as { line: number }[]).map((r) => r.line),
    [3],
    "only the flag's own references, never a computed key's",
  );

  const strangerId = (await cli(dir, ['user', 'create', '--email', 'stranger@demo.flagwire.test'])).json.id as string;
  t.equal((await setPassword(dir, strangerId, 'stranger password 123\n')).code, 0);
  const stranger = await signIn(base, 'stranger@demo.flagwire.test', 'stranger password 123');
  t.equal((await consoleCall(base, stranger, 'GET', `flags/${flagId}/code-refs`)).status, 404);
  t.equal((await consoleCall(base, stranger, 'GET', `projects/${kShop}/code-refs/missing`)).status, 404);
});
