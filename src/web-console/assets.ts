// The web console's page, style sheet and scripts. The scripts are plain TypeScript (browser/), compiled by
// the project's tsc at install (npm's prepare) to ES modules that browsers load as they are: no bundler
// and no UI library, so nothing is fetched from another origin and there is no second build to keep.
// They are read from disk once, when the server starts.
import { readdirSync, readFileSync } from 'node:fs';
import { kConsoleCss } from './style.js';

export interface Asset {
  body: Buffer;
  contentType: string;
}

export interface Assets {
  page: Buffer;
  /** By file name under /console/assets/. */
  files: ReadonlyMap<string, Asset>;
}

/**
 * Nothing from another origin, no inline script or style: a page injected with markup could not run
 * it, and could not send what it reads anywhere but here.
 */
const kContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const kPageHeaders = [
  ['Content-Security-Policy', kContentSecurityPolicy],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
] as const;

/**
 * The page, with a `modulepreload` link for every module the app imports, directly or not: without
 * them the browser finds the modules a level of imports at a time, one round trip per level (the rule
 * builder's parts are six levels below app.js); over a 40 ms round trip the flag page drew in 774 ms
 * without them, 622 with them (bench/RESULTS.md, "The web console's first draw").
 */
export function consolePage(preloaded: readonly string[]): string {
  const links = preloaded.map((name) => `<link rel="modulepreload" href="/console/assets/${name}">\n`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flagwire console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/app.js"></script>
${links}</head>
<body>
<header class="top"><a class="brand" href="#/">Flagwire console</a><nav id="account" aria-label="Account"></nav></header>
<main id="main" tabindex="-1"><p id="status" class="status" role="status" aria-live="polite"></p><div id="page"><p>Loading…</p></div></main>
</body>
</html>
`;
}

/** tsc's static imports of a sibling (`import ... from './x.js'`, `export ... from './x.js'`, `import './x.js'`); the modules use no import(). */
const kSiblingImport = /(?:\bfrom|^import)\s*'\.\/([\w-]+\.js)'/gm;

/** The modules app.js imports, directly or not (views.js, types only, is erased by tsc: nothing imports it), sorted. */
export function importedModules(sources: ReadonlyMap<string, string>): string[] {
  const found = new Set<string>();
  const visit = (name: string) => {
    for (const [, imported] of (sources.get(name) ?? '').matchAll(kSiblingImport)) {
      if (!found.has(imported!)) {
        found.add(imported!);
        visit(imported!);
      }
    }
  };
  visit('app.js');
  return [...found].sort();
}

export function loadAssets(): Assets {
  const files = new Map<string, Asset>();
  files.set('console.css', { body: Buffer.from(kConsoleCss), contentType: 'text/css; charset=utf-8' });
  const dir = new URL('./browser/', import.meta.url);
  const sources = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.js')) continue;
    const body = readFileSync(new URL(name, dir));
    files.set(name, { body, contentType: 'text/javascript; charset=utf-8' });
    sources.set(name, body.toString('utf8'));
  }
  return { page: Buffer.from(consolePage(importedModules(sources))), files };
}
