// People in the web console, in headless Chromium against the real server: an Owner invites a new
// address; its mail (read from the outbox, as the operator does) links to the join page, which names the
// organisation, the address and the role, where the invitee chooses a name and a password (typed twice:
// a mismatch is said and nothing sent) and lands signed in as a member, who then reads that mail on
// their Mail page. With FLAGWIRE_CONSOLE_CREATE_ORGS on, they create an organisation (its Owner) and a
// project with environments in it. axe-core finds nothing serious or critical on the new pages.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import {
  demoPassword,
  ensureChromium,
  kDemoOwner,
  launchChromium,
  seriousViolations,
  signedInPage,
  wcagViolationsEverywhere,
} from '../helpers/web-console.js';
import { startTestServer } from '../helpers/server.js';

const kPia = 'pia@new.test';

t.test('invite a new address, join by the mailed link, create an organisation and a project', async (t) => {
  ensureChromium();
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_CONSOLE_CREATE_ORGS: 'on' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const browser = await launchChromium(t);
  const orgA = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;

  const owner = await signedInPage(browser, base, kDemoOwner, demoPassword(server.output()));
  await owner.goto(`${base}/console/#/orgs/${orgA}/members`);
  await owner.getByLabel('E-mail address to invite').fill(kPia);
  await owner.getByLabel('Invite as').selectOption('editor');
  await owner.getByRole('button', { name: 'Invite', exact: true }).click();
  await owner.getByText(`${kPia} is invited as editor and sent an e-mail`).waitFor();

  const messages = (await cli(server.dataDir, ['mail', 'list'])).json.messages as { to: string; subject: string; text: string }[];
  const mail = messages.find((m) => m.to === kPia)!;
  t.match(mail.text, 'Demo Owner (owner@demo.flagwire.test) invites you to the organisation "Demo Org" as editor.');
  const link = /http:\/\/\S+\/console\/#\/join\/\S+/.exec(mail.text)![0];

  const pia = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  pia.setDefaultTimeout(60_000);
  let joins = 0;
  pia.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/console/api/join')) joins++;
  });
  await pia.goto(link);
  await pia.getByRole('heading', { name: 'Join Demo Org' }).waitFor();
  await pia.getByText('You are invited to Demo Org as editor, with the address pia@new.test.').waitFor();
  t.strictSame(await seriousViolations(pia), [], 'the join page');
  t.same(await wcagViolationsEverywhere(pia), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: the join page');
  await pia.getByLabel('Your name').fill('Pia');
  await pia.getByLabel('Password', { exact: true }).fill('short');
  await pia.getByRole('button', { name: 'Join' }).click();
  t.ok(
    await pia.evaluate(() => !(document.querySelector('input[name=password]') as HTMLInputElement).checkValidity()),
    'the form asks for 12',
  );
  await pia.getByLabel('Password', { exact: true }).fill('pia password 1234');
  await pia.getByLabel('Password again').fill('pia password 1243');
  await pia.getByRole('button', { name: 'Join' }).click();
  await pia.getByText('The two passwords are not the same: type the same password in both boxes. Nothing was sent.').waitFor();
  t.equal(joins, 0, 'a mismatch sends nothing');
  await pia.getByLabel('Password again').fill('pia password 1234');
  await pia.getByRole('button', { name: 'Join' }).click();
  await pia.getByRole('heading', { name: 'Organisations and projects' }).waitFor();
  await pia.getByText('Welcome, Pia: you are signed in as pia@new.test.').waitFor();
  t.ok(await pia.getByRole('heading', { name: 'Demo Org', level: 2 }).isVisible(), 'a member of the organisation');
  t.notOk(pia.url().includes('join'), 'the used link leaves the address');
  t.equal(await pia.getByRole('group', { name: 'New project in Demo Org' }).count(), 0, 'an Editor creates no project');
  t.strictSame(await seriousViolations(pia), [], 'the home page with its forms');

  await pia.getByRole('link', { name: 'Your mail' }).click();
  await pia.getByRole('heading', { name: 'Flagwire: Demo Owner invites you to Demo Org' }).waitFor();

  await pia.goto(`${base}/console/#/`);
  const newOrg = pia.getByRole('group', { name: 'New organisation' });
  await newOrg.getByLabel('Name').fill('Pia Labs');
  await newOrg.getByRole('button', { name: 'Create organisation' }).click();
  await pia.getByText('Organisation Pia Labs created; you are its Owner.').waitFor();
  const newProject = pia.getByRole('group', { name: 'New project in Pia Labs' });
  await newProject.getByLabel('Name').fill('Lab app');
  const environment2 = newProject.getByRole('textbox', { name: 'Environment 2' });
  t.equal(await environment2.isVisible(), false, 'a single-environment project: its environment list hidden');
  await newProject.getByLabel('Kind').selectOption('multi');
  t.equal(await environment2.isVisible(), true, 'several: the list shown');
  await newProject.getByRole('textbox', { name: 'Environment 2' }).fill('live');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await pia.getByText('Project Lab app created in Pia Labs.').waitFor();
  await pia.getByText('(environments: development, live)').waitFor();
  t.strictSame(await seriousViolations(pia), [], 'the home page after creating');
  await pia.getByRole('link', { name: 'Lab app' }).click();
  await pia.getByRole('heading', { name: 'Lab app' }).first().waitFor();
});
