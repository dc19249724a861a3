// The web console's flag page, first drawn in Chromium (issue 56, item 5): a flag whose rule uses every
// operator of the rule builder, with rolled-back rollouts (a timeline, an earlier one, the start form's
// steps table), opened by a fresh load each time; each build of the browser code side by side, loads
// interleaved, so one moment's load on the machine falls on every build alike. Each build has its own
// front on the loopback: its script or modules from disk and the page that loads them (assets.ts
// kConsolePage, with the server's Content-Security-Policy, so a build that needs what the policy refuses
// fails here), everything else (the API) passed to the one server. Not
// Chromium's request interception: it adds more to a load of the console's modules than a difference
// in how many there are would.
//
// "Drawn": from the navigation's start until the page holds the rule builder and the rollout form (a
// MutationObserver); "painted": the next frame after that (requestAnimationFrame, then a task). Served
// bytes are the script files the load fetched, raw and gzipped file by file, as a server would send them.
//
// Run: npm run build && node dist/bench/console-first-draw.bench.js [--loads 15] [--rtt MS] [NAME=DIR ...]
// NAME=DIR: a folder of what a build serves: the console's one script (console.js, as the server serves it
// since issue 57's tenth round: the page is assets.ts' kConsolePage), or the browser modules tsc writes
// (.js files, app.js first: the page preloads every module app.js reaches, as the server's did before);
// NAME=DIR:no-preload: modules without the preload links. None given: this build's script
// (dist/src/web-console) beside its modules (dist/src/web-console/browser).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { kConsolePage, kPageHeaders } from '../src/web-console/assets.js';
import { call } from '../test/helpers/http.js';
import { startTestServer } from '../test/helpers/server.js';
import { demoPassword, demoSecret, kDemoOwner, launchChromium, signedInPage } from '../test/helpers/web-console.js';

const args = process.argv.slice(2);
const loadsAt = args.indexOf('--loads');
const kLoads = loadsAt === -1 ? 15 : Number(args[loadsAt + 1]);
const rttAt = args.indexOf('--rtt');
// A round trip added to every request by Chromium's network emulation: the loopback has none, a user's network has.
const kRttMs = rttAt === -1 ? 0 : Number(args[rttAt + 1]);
const named = args.filter((a) => a.includes('='));
const kThisBuild = [
  `script=${fileURLToPath(new URL('../src/web-console/', import.meta.url))}`,
  `modules=${fileURLToPath(new URL('../src/web-console/browser/', import.meta.url))}`,
];
const builds = (named.length > 0 ? named : kThisBuild).map((a) => {
  const [name, spec] = a.split('=') as [string, string];
  const preload = !spec.endsWith(':no-preload');
  return { name, dir: preload ? spec : spec.slice(0, -':no-preload'.length), preload };
});

/** Every operator the builder offers, groups, a not and a split (test/web-console/rule-builder.test.ts). */
const kRule = {
  if: [
    { '==': [{ var: 'plan' }, 'gold'] },
    'green',
    { in: [{ var: 'country' }, ['NL', 'BE']] },
    'blue',
    { starts_with: [{ var: 'email' }, 'admin'] },
    'green',
    { ends_with: [{ var: 'email' }, '@example.com'] },
    'blue',
    { sem_ver: [{ var: 'version' }, '>=', '2.0.0'] },
    'green',
    { '<': [{ var: 'age' }, 18] },
    'blue',
    { and: [{ '!=': [{ var: 'plan' }, 'free'] }, { '!': [{ '<=': [{ var: 'age' }, 30] }] }] },
    'green',
    { or: [{ '>': [{ var: 'age' }, 90] }, { '>=': [{ var: 'seats' }, 10] }] },
    'red',
    { fractional: [{ var: 'company' }, ['red', 25], ['blue', 75]] },
  ],
};

const stops: (() => unknown)[] = [];
const teardown = { teardown: (fn: () => unknown) => stops.push(fn) };
try {
  const server = await startTestServer({ demo: true });
  stops.push(() => server.stop());
  const base = server.baseUrl;
  const token = demoSecret(server.output(), 'demo-write');
  const ok = async (method: string, path: string, body: unknown) => {
    const r = await call(base, method, path, { token, body });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const flag = await ok('POST', '/api/v1/flags', { name: 'checkout', enabled: true, trafficPercentage: 100 });
  await ok('PATCH', `/api/v1/flags/${flag.id}`, {
    variants: { red: '#f00', green: '#0f0', blue: '#00f' },
    defaultVariant: 'red',
    targeting: kRule,
  });
  for (let i = 0; i < 2; i++) {
    const steps = [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 50, holdMs: 86_400_000 }, { trafficPercentage: 100 }];
    const rollout = await ok('POST', `/api/v1/flags/${flag.id}/rollouts`, { steps });
    await ok('POST', `/api/v1/rollouts/${rollout.id}/rollback`, {});
  }

  const browser = await launchChromium(teardown);
  const pages: {
    name: string;
    dir: string;
    page: Page;
    url: string;
    drawn: number[];
    painted: number[];
    files: Set<string>;
    refused: string[];
  }[] = [];
  for (const build of builds) {
    const files = new Set<string>();
    const front = await frontFor(server.port, build.dir, build.preload, files);
    stops.push(() => new Promise((resolve) => front.server.close(resolve)));
    const page = await signedInPage(browser, front.base, kDemoOwner, demoPassword(server.output()));
    const entry = {
      ...build,
      page,
      url: `${front.base}/console#/flags/${flag.id}`,
      drawn: [] as number[],
      painted: [] as number[],
      files,
      refused: [] as string[],
    };
    await page.context().addInitScript(() => {
      const drawn = () =>
        document.querySelector('.rule-builder .rule-branch') !== null &&
        [...document.querySelectorAll('legend')].some((l) => l.textContent?.startsWith('Start a rollout'));
      new MutationObserver((_, observer) => {
        if (!drawn()) return;
        observer.disconnect();
        const drawnMs = performance.now();
        requestAnimationFrame(() =>
          setTimeout(() => {
            (globalThis as { firstDraw?: unknown }).firstDraw = { drawnMs, paintedMs: performance.now() };
          }),
        );
      }).observe(document, { childList: true, subtree: true });
    });
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) entry.refused.push(m.text());
    });
    page.on('pageerror', (e) => entry.refused.push(e.message));
    if (kRttMs > 0) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: kRttMs, downloadThroughput: -1, uploadThroughput: -1 });
    }
    pages.push(entry);
  }

  const before = loadavg();
  // One load of each build per round, the order turned each round (ABBA...).
  for (let round = 0; round < kLoads + 1; round++) {
    const order = round % 2 === 0 ? pages : [...pages].reverse();
    for (const entry of order) {
      // A load from blank each time: the same address with only its hash changed is no navigation.
      await entry.page.goto('about:blank');
      await entry.page.goto(entry.url);
      const handle = await entry.page.waitForFunction(() => (globalThis as { firstDraw?: unknown }).firstDraw, null, { timeout: 30_000 });
      const { drawnMs, paintedMs } = (await handle.jsonValue()) as { drawnMs: number; paintedMs: number };
      // The first round warms Chromium's and the server's caches alike for every build, and is left out.
      if (round === 0) continue;
      entry.drawn.push(drawnMs);
      entry.painted.push(paintedMs);
    }
  }
  const after = loadavg();
  for (const entry of pages) entry.files.clear();
  // The files of one more load, counted apart from the sign-in's.
  for (const entry of pages) {
    await entry.page.goto('about:blank');
    await entry.page.goto(entry.url);
    await entry.page.waitForFunction(() => (globalThis as { firstDraw?: unknown }).firstDraw, null, { timeout: 30_000 });
  }

  console.log(
    `${kLoads} loads per build, interleaved, ${kRttMs} ms added per round trip; load average ${before[0]!.toFixed(2)} before, ${after[0]!.toFixed(2)} after`,
  );
  console.log('build | drawn ms: median (min-max) | painted ms: median (min-max) | scripts | raw bytes | gzip bytes');
  for (const e of pages) {
    let raw = 0;
    let gzip = 0;
    for (const file of e.files) {
      const body = readFileSync(join(e.dir, file));
      raw += body.length;
      gzip += gzipSync(body).length;
    }
    console.log(
      `${e.name} | ${spread(e.drawn)} | ${spread(e.painted)} | ${e.files.size} | ${raw.toLocaleString('en')} | ${gzip.toLocaleString('en')}`,
    );
    if (e.refused.length > 0) throw new Error(`${e.name}: ${e.refused.join('; ')}`);
  }
} finally {
  for (const stop of stops.reverse()) await stop();
}

/** The modules app.js imports, directly or not, sorted. */
function importedModules(sources: ReadonlyMap<string, string>): string[] {
  // tsc's static imports of a sibling (`import ... from './x.js'`, `export ... from './x.js'`, `import './x.js'`).
  const siblingImport = /(?:\bfrom|^import)\s*'\.\/([\w-]+\.js)'/gm;
  const found = new Set<string>();
  const visit = (name: string) => {
    for (const [, imported] of (sources.get(name) ?? '').matchAll(siblingImport)) {
      if (!found.has(imported!)) {
        found.add(imported!);
        visit(imported!);
      }
    }
  };
  visit('app.js');
  return [...found].sort();
}

/** The page a build of modules is loaded from: kConsolePage with app.js for its script, and a preload link for each of `preloaded`. */
function modulesPage(preloaded: readonly string[]): string {
  const links = preloaded.map((name) => `<link rel="modulepreload" href="/console/assets/${name}">\n`).join('');
  const script = '<script type="module" src="/console/assets/console.js"></script>\n';
  if (!kConsolePage.includes(script)) throw new Error("assets.ts' page no longer loads console.js as this bench reads it");
  return kConsolePage.replace(script, `<script type="module" src="/console/assets/app.js"></script>\n${links}`);
}

/**
 * A front for one build on the loopback: the page (the server's for a build with console.js; for
 * modules, app.js preloading what it reaches or, `preload` false, nothing), /console/assets/*.js from
 * `dir` (each name served kept in `files`), every other request passed to the server at `port` as it
 * came, its Host too, which the console's origin check reads.
 */
async function frontFor(port: number, dir: string, preload: boolean, files: Set<string>): Promise<{ server: Server; base: string }> {
  const sources = new Map(readdirSync(dir).flatMap((f) => (f.endsWith('.js') ? [[f, readFileSync(join(dir, f), 'utf8')] as const] : [])));
  const page = sources.has('console.js') ? kConsolePage : modulesPage(preload ? importedModules(sources) : []);
  const front = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://front').pathname;
    if (req.method === 'GET' && (path === '/console' || path === '/console/')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...Object.fromEntries(kPageHeaders) }).end(page);
      return;
    }
    if (req.method === 'GET' && /^\/console\/assets\/[\w-]+\.js$/.test(path)) {
      const file = path.split('/').at(-1)!;
      let body: Buffer;
      try {
        body = readFileSync(join(dir, file));
      } catch {
        res.writeHead(404).end();
        return;
      }
      files.add(file);
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }).end(body);
      return;
    }
    const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return { server: front, base: `http://127.0.0.1:${(front.address() as AddressInfo).port}` };
}

function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${median.toFixed(1)} (${sorted[0]!.toFixed(1)}-${sorted.at(-1)!.toFixed(1)})`;
}
