// Code references in the console (issue 99 item 4; docs/web-console.md), in Chromium against the real
// server: a write token pushes the scans of two branches over the Management API; a flag's page shows
// each branch's latest scan (branch, commit) with the flag's references, file, line and the lines around
// them as text (a line holding an <img onerror> makes no element), never a computed key's reference; a
// flag the scans do not read says so, a project never scanned says so; the lifecycle page lists the keys
// code reads that are no flags, with where. axe-core's WCAG 2.2 AA rules pass on both pages.
import type { Page } from 'playwright-core';
import t from 'tap';
import { codeReference } from '../helpers/code-reference.js';
import { call } from '../helpers/http.js';
import { demoConsole, visit, wcagViolations } from '../helpers/web-console.js';

t.setTimeout(300_000);

const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';
const kHostile = '<img src=x onerror="window.pwned = 1">';

const { base, secret, ownerPage } = await demoConsole(t);
const write = secret('demo-write');

const reference = (key: string | null, file: string, line: number, context: string[]) =>
  codeReference(key, line, { file, language: file.endsWith('.py') ? 'python' : 'typescript', context, contextStart: line - 1 });

async function push(body: unknown): Promise<void> {
  const pushed = await call(base, 'POST', '/api/v1/code-refs', { token: write, body });
  if (pushed.status !== 200) throw new Error(`push: ${pushed.status} ${pushed.text}`);
}

async function flagId(name: string, token: string): Promise<string> {
  return (await call(base, 'GET', `/api/v1/flags?name=${name}`, { token })).json.flags[0].id as string;
}

/** The texts of the elements `selector` finds in the page's section named `name`. */
async function texts(page: Page, name: string, selector: string): Promise<string[]> {
  const region = page.getByRole('region', { name, exact: true });
  await region.waitFor();
  return region.locator(selector).allTextContents();
}

await push({
  repository: 'shop',
  branch: 'main',
  commit: 'a1c0ffee',
  references: [
    reference('holiday-banner', 'src/banner.ts', 12, [
      '// the seasonal banner',
      "if (await client.getBooleanValue('holiday-banner', false)) {",
      `  root.innerHTML = '${kHostile}';`,
    ]),
    reference('ghost-promo', 'src/promo.py', 3, ['', 'if client.get_boolean_value("ghost-promo", False):']),
    reference(null, 'src/flags.ts', 20, ['', 'await client.getBooleanValue(keyOf(user), false);']),
  ],
});
await push({
  repository: 'shop',
  branch: 'release/2026-11',
  commit: 'b2d00d',
  references: [
    reference('holiday-banner', 'web/Banner.tsx', 7, ['', "const on = useBooleanFlagValue('holiday-banner', false);"]),
    reference('ghost-promo', 'web/Promo.tsx', 4, ['', "useBooleanFlagValue('ghost-promo', false);"]),
  ],
});

const page = await ownerPage();
await page.setViewportSize({ width: 1280, height: 900 });

t.test("a flag's page: each branch's latest scan with the flag's references, file, line and context as text", async (t) => {
  const id = await flagId('holiday-banner', write);
  await page.goto(`${base}/console#/flags/${id}`);
  await page.getByRole('heading', { level: 1, name: 'holiday-banner' }).waitFor();
  const main = 'References on shop@main';
  t.same(await texts(page, main, 'h3'), ['shop@main']);
  t.match((await texts(page, main, 'p.muted'))[0], /^Commit a1c0ffee · scanned \d{4}-\d\d-\d\d /, 'its commit and when it was scanned');
  t.same(await texts(page, main, 'div > p'), ['src/banner.ts:12 getBooleanValue (openfeature, literal)']);
  t.same(
    await texts(page, main, 'pre'),
    [`11  // the seasonal banner\n12  if (await client.getBooleanValue('holiday-banner', false)) {\n13    root.innerHTML = '${kHostile}';`],
    'the lines around it, numbered, a line holding markup as its text',
  );
  const release = 'References on shop@release/2026-11';
  t.same(await texts(page, release, 'h3'), ['shop@release/2026-11']);
  t.match((await texts(page, release, 'p.muted'))[0], /^Commit b2d00d · /);
  t.same(await texts(page, release, 'div > p'), ['web/Banner.tsx:7 getBooleanValue (openfeature, literal)']);
  t.same(await texts(page, release, 'pre'), ["6  \n7  const on = useBooleanFlagValue('holiday-banner', false);"]);
  const all = (await texts(page, 'Code references', 'pre, div > p')).join('\n');
  t.notMatch(all, 'src/flags.ts', "a computed key's reference is not shown");
  t.notMatch(all, 'ghost-promo', "another key's reference is not shown");
  t.equal(await page.locator('main img').count(), 0, 'no element made of a scanned line');
  t.equal(await page.evaluate(() => (globalThis as { pwned?: number }).pwned), undefined, 'no handler ran');
  t.same(await wcagViolations(page), [], 'axe WCAG 2.2 AA on the flag page with its references');
});

t.test('a flag the latest scans do not read, and a project never scanned, say so', async (t) => {
  await visit(page, `#/flags/${await flagId('dark-mode', write)}`, 'dark-mode');
  t.same(await texts(page, 'Code references', 'p'), ['No references in the latest scans (shop@main, shop@release/2026-11).']);
  await visit(page, `#/flags/${await flagId('search-v2', secret('demo-platform-write'))}`, 'search-v2');
  t.match(await texts(page, 'Code references', 'p'), [/^Never scanned: no code scan was pushed to this project\./]);
});

t.test('the lifecycle page lists the keys code reads that are no flags, with where', async (t) => {
  await visit(page, `#/projects/${kShop}/lifecycle`, 'Lifecycle of Web shop');
  const name = 'Keys in code that are not flags';
  t.same(await texts(page, name, 'tbody td:nth-child(1)'), ['ghost-promo']);
  t.same(await texts(page, name, 'tbody td:nth-child(2)'), ['2']);
  t.same(await texts(page, name, 'tbody li'), ['shop@main src/promo.py:3', 'shop@release/2026-11 web/Promo.tsx:4'], 'each place');
  t.same(await texts(page, name, 'p.muted'), ['1 reference computes its key, so no flag is named there.']);
  t.same(await wcagViolations(page), [], 'axe WCAG 2.2 AA on the lifecycle page');
  await visit(page, `#/projects/${kPlatform}/lifecycle`, 'Lifecycle of Platform');
  t.match(await texts(page, name, 'p'), [/^Never scanned/]);
});
