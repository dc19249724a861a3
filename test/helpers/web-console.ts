// The web console from a test: setting a password with the console's `user password` (the password on
// its standard input), signing in over HTTP as the page does, and a headless Chromium (Debian's headless
// shell, installed by `scripts/ensure.sh chromium`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { cli } from './cli.js';
import { call } from './http.js';
import { playwright } from './playwright.js';
import { startTestServer, type TestServer } from './server.js';

const kEnsureChromium = fileURLToPath(new URL('../../../scripts/ensure.sh', import.meta.url));
/**
 * Debian's chromium-headless-shell: the same Chromium build as its `chromium` (the same Blink, V8 and
 * DevTools protocol, so a page is parsed, laid out, drawn and scripted as a user's Chromium does it),
 * built as the "old headless" shell, without the desktop browser's layer, as Playwright runs headless
 * Chromium by default. Full `chromium --headless` runs that whole browser with no window (its profile
 * and UI services, an on-device model service among them): it spent 263 CPU s on the browser tests'
 * pages (web-console, sso, scim, provider: 59 files, load 20-40) where the shell spent 143, every
 * assertion passing on both. What the shell lacks is the browser's own features (extensions, the PDF
 * viewer, prompts and bars), which the console does not use and no test reaches for. The binary, not
 * /usr/bin's script, which runs it under a shell that stays its parent.
 */
export const kChromium = '/usr/lib/chromium/chromium-headless-shell';

/** Installs chromium-headless-shell when missing (apt-get; quiet, idempotent). */
export function ensureChromium(): void {
  execFileSync(kEnsureChromium, ['chromium'], { stdio: 'inherit', timeout: 600_000 });
}

/**
 * The features Playwright enables itself (its `chromiumSwitches`): Chromium reads only the last
 * `--enable-features` it is given, so ours names them too (test/web-console/chromium-launch.test.ts
 * checks them against Playwright's own list).
 */
export const kPlaywrightFeatures = ['CDPScreenshotNewSurface', 'SkipListAccountsWithoutGaiaCookies'];

/**
 * How Chromium is started, by a test file or by the suite's runner (scripts/run-tests.mjs). The GPU's work
 * and the network service run in the browser's process (`--in-process-gpu`, NetworkServiceInProcess2), not
 * in a process each: the pages render and load as before, and the browser tests' Chromium spent less
 * CPU (web-console files run each way alternated). `--disable-gpu` beside them cost more, not less.
 */
export const kChromiumLaunch = {
  executablePath: kChromium,
  headless: true,
  args: ['--no-sandbox', '--in-process-gpu', `--enable-features=${[...kPlaywrightFeatures, 'NetworkServiceInProcess2'].join(',')}`],
};

/**
 * The websocket endpoint of the suite's shared Chromium (playwright's launchServer), set by the runner for
 * the files that launch one: a Chromium start and end per file cost about 1 CPU s.
 */
export const kSharedChromiumEnv = 'FLAGWIRE_TEST_CHROMIUM';

/**
 * Debian's Chromium (installed when missing), headless, closed when the test `t` ends: under the suite's
 * runner, a connection to its shared Chromium, whose close ends every context the test made in it (the
 * pages and cookies of each test are its own either way); run alone, a Chromium of this test's own.
 */
export async function launchChromium(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const shared = process.env[kSharedChromiumEnv];
  // Loaded here, not with this module: playwright costs about 0.4 CPU s to load, and many files use
  // only this module's HTTP helpers.
  const { chromium } = playwright();
  let browser: Browser;
  if (shared !== undefined && shared !== '') {
    browser = await chromium.connect(shared);
  } else {
    ensureChromium();
    browser = await chromium.launch(kChromiumLaunch);
  }
  t.teardown(() => browser.close());
  return browser;
}

/** A page of its own (its own cookies) signed in to the console at `baseUrl` by the form, on the first page. */
export async function signedInPage(browser: Browser, baseUrl: string, email: string, password: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();
  return page;
}

/**
 * `flagwire user password USER_ID --json [...more]` with `input` on standard input: exit code and the JSON.
 * Run in this process, as test/helpers/cli.ts runs it (a console process cost about 0.5 CPU s a password),
 * except with --database; the binary reading its own standard input stays proved by those runs, by
 * test/cli/password-terminal and test/server/readme-examples.
 */
export async function setPassword(
  dataDir: string,
  userId: string,
  input: string,
  more: readonly string[] = [],
): Promise<{ code: number; json: any }> {
  const { code, json } = await cli(dataDir, ['user', 'password', userId, ...more], { input });
  return { code, json };
}

export const kDemoEditor = 'editor@demo.flagwire.test';
export const kDemoEditorPassword = 'editor password 123';

/** An Editor of `orgId` with a password, made with the real CLI, and a page signed in as them (at the home page). */
export async function demoEditorPage(browser: Browser, server: TestServer, orgId: string): Promise<Page> {
  const editor = await cli(server.dataDir, ['user', 'create', '--email', kDemoEditor, '--name', 'Demo Editor']);
  const member = await cli(server.dataDir, ['org', 'add-member', orgId, editor.json.id, '--role', 'editor']);
  const password = await setPassword(server.dataDir, editor.json.id, `${kDemoEditorPassword}\n`);
  if (member.code !== 0 || password.code !== 0) throw new Error(`the demo Editor was not made: ${JSON.stringify([member, password])}`);
  const page = await signedInPage(browser, server.baseUrl, kDemoEditor, kDemoEditorPassword);
  await page.getByRole('link', { name: 'Members and roles' }).waitFor();
  return page;
}

export interface WebSession {
  cookie: string;
  csrf: string;
  setCookie: string;
}

/** POST /console/api/sign-in from this origin; throws with the answer when it is not 200. */
export async function signIn(baseUrl: string, email: string, password: string, headers: Record<string, string> = {}): Promise<WebSession> {
  const res = await call(baseUrl, 'POST', '/console/api/sign-in', {
    headers: { origin: baseUrl, 'content-type': 'application/json', ...headers },
    body: { email, password },
  });
  const body = JSON.parse(res.text) as { csrfToken: string };
  if (res.status !== 200) throw new Error(`sign-in ${res.status}: ${JSON.stringify(body)}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrfToken, setCookie };
}

/** A /console/api call with the session's cookie (and, unless `csrf: false`, its CSRF token and this origin). */
export async function consoleCall(
  baseUrl: string,
  session: WebSession | null,
  method: string,
  path: string,
  opts: { body?: unknown; origin?: string | null; csrf?: boolean; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (session !== null) headers.cookie = session.cookie;
  if (session !== null && opts.csrf !== false) headers['x-flagwire-csrf'] = session.csrf;
  const origin = opts.origin === undefined ? baseUrl : opts.origin;
  if (origin !== null) headers.origin = origin;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await call(baseUrl, method, `/console/api/${path}`, opts.body === undefined ? { headers } : { headers, body: opts.body });
  return { status: res.status, json: res.text === '' ? null : JSON.parse(res.text), headers: res.headers };
}

/** The demo owner's console password, from what `serve --demo` printed. */
export function demoPassword(output: string): string {
  const m = /email (\S+)\s+password (\S+)/.exec(output);
  if (!m) throw new Error(`no console password in:\n${output}`);
  return m[2]!;
}

/** A token secret `serve --demo` printed ("  NAME  PERMISSION  SECRET"). */
export function demoSecret(output: string, name: string): string {
  const m = new RegExp(`^\\s+${name}\\s+(?:read|write)\\s+(fw_\\S+)$`, 'm').exec(output);
  if (!m) throw new Error(`no secret of ${name} in:\n${output}`);
  return m[1]!;
}

/** The demo's owner, whose console password `serve --demo` prints. */
export const kDemoOwner = 'owner@demo.flagwire.test';

export interface DemoConsole {
  browser: Browser;
  server: TestServer;
  base: string;
  /** A token secret the demo printed (demoSecret). */
  secret(name: string): string;
  /** A page signed in as the demo's owner. */
  ownerPage(): Promise<Page>;
}

/** What most browser tests start with: Chromium and a demo server (`env` added), both ended with the test. */
export async function demoConsole(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<DemoConsole> {
  const browser = await launchChromium(t);
  const server = await startTestServer({ demo: true, env });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  return {
    browser,
    server,
    base,
    secret: (name) => demoSecret(server.output(), name),
    ownerPage: () => signedInPage(browser, base, kDemoOwner, demoPassword(server.output())),
  };
}

const kAxe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const kWcag22AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/**
 * axe-core on the page as it is now, with its default rules or only those of `tags`. Only violations are
 * read, so axe is asked to process only those (`resultTypes`): it still runs every rule on every node and
 * returns each violation in full, but describes one node of each pass, incomplete and inapplicable result
 * instead of all of them (a selector and a copy of the HTML of every node that passed). On the flag page,
 * 0.087-0.145 CPU s of Chromium a run against 0.110-0.155 (three rounds of four runs each, alternated).
 */
async function axeViolations(page: Page, tags: readonly string[] | null): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(kAxe);
  return page.evaluate(async (only) => {
    const axe = (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const rules = only === null ? {} : { runOnly: { type: 'tag', values: only } };
    return (await axe.run({ ...rules, resultTypes: ['violations'] })).violations;
  }, tags);
}

function describe(v: AxeViolation): string {
  return `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`;
}

/** axe-core's default rules on the page as it is now: the serious and critical violations (none expected). */
export async function seriousViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page, null)).filter((v) => v.impact === 'serious' || v.impact === 'critical').map(describe);
}

/** axe-core's WCAG 2.2 AA rules on the page as it is now: every violation, of any impact. */
export async function wcagViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page, kWcag22AA)).map(describe);
}

/** The widths the console is checked at: a desktop and a phone. */
export const kCheckedViewports = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/**
 * axe-core's WCAG 2.2 AA rules on the page as it is now, at 1,280 and 390 px wide, light and dark: every
 * violation, each prefixed with where it was found. The page is left at the last of these.
 */
export async function wcagViolationsEverywhere(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const viewport of kCheckedViewports) {
    await page.setViewportSize(viewport);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      found.push(...(await wcagViolations(page)).map((v) => `${viewport.width} px, ${colorScheme}: ${v}`));
    }
  }
  return found;
}

/** Goes to `hash` the way a link does (a hash change, no reload), then waits for the page's heading. */
export async function visit(page: Page, hash: string, heading: string): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
}
