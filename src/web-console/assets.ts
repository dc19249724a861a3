// The web console's page, style sheet and script. The browser code is plain TypeScript (browser/), compiled
// by the project's tsc at install (npm's prepare) and bundled by esbuild into one script with its source
// map (scripts/bundle-console.mjs): no UI library, nothing fetched from another origin. They are read from
// disk once: the page's parts when the server starts, the source map when it is first asked for.
import { readFileSync } from 'node:fs';
import { kConsoleCss } from './style.js';

export interface Asset {
  /** The file's bytes; null when they cannot be read (the route answers 404). */
  body(): Buffer | null;
  readonly contentType: string;
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
 * The page: the style sheet and the console's one script. One script, not the modules tsc writes: a
 * browser found those a level of imports at a time (a request per module), and the flag page first draws
 * in about half the time from the script (bench/RESULTS.md, console-first-draw.bench).
 */
export const kConsolePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flagwire console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/console.js"></script>
</head>
<body>
<header class="top"><a class="brand" href="#/">Flagwire console</a><nav id="account" aria-label="Account"></nav></header>
<main id="main" tabindex="-1"><p id="status" class="status" role="status" aria-live="polite"></p><div id="page"><p>Loading…</p></div></main>
</body>
</html>
`;

/** The assets of the console built into `from` (the folder of this module's build, unless a test names another). */
export function loadAssets(from: URL = new URL('./', import.meta.url)): Assets {
  const files = new Map<string, Asset>();
  const css = Buffer.from(kConsoleCss);
  files.set('console.css', { body: () => css, contentType: 'text/css; charset=utf-8' });
  const script = readFileSync(new URL('console.js', from));
  files.set('console.js', { body: () => script, contentType: 'text/javascript; charset=utf-8' });
  // What a browser's developer tools ask for to show the TypeScript: never on a page's load. So it is read
  // on its first request, not at start (a large file that most nodes would hold and never send); a map
  // missing from an install is a 404, never an error thrown in the handler.
  let map: Buffer | null | undefined;
  files.set('console.js.map', {
    body: () => {
      if (map === undefined) {
        try {
          map = readFileSync(new URL('console.js.map', from));
        } catch {
          map = null;
        }
      }
      return map;
    },
    contentType: 'application/json',
  });
  return { page: Buffer.from(kConsolePage), files };
}
