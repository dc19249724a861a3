// The console's lifecycle page and its archive and restore, over HTTP against the real server (issue 99;
// docs/web-console.md: A project's lifecycle): every flag with its stage, archived ones too; an owner
// archives and restores; a viewer reads the page but is refused an archive, nothing written.
import t from 'tap';
import { demoWithViewer } from '../helpers/demo-viewer.js';
import { consoleCall } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';
const { base, owner, viewer } = await demoWithViewer(t);

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
