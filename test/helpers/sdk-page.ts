// An application's page as a browser test serves it: `script` (ES modules importing the stock OpenFeature
// web SDK, its OFREP provider and Flagwire's built events module, ./dist/src/provider/events.js) bundled
// with esbuild as an application's bundler would, inlined in a page served from an origin of its own, so
// its calls to Flagwire are cross-origin as a real site's are.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The page's address; its server closes at the test's end. */
export async function servedSdkPage(t: { teardown(fn: () => unknown): void }, script: string): Promise<string> {
  const bundle = await build({
    stdin: { resolveDir: kRoot, loader: 'js', contents: script },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    logLevel: 'warning',
  });
  const page = `<!doctype html><html lang="en"><head><title>shop</title><script>${bundle.outputFiles[0]!.text}</script></head><body>shop</body></html>`;
  const app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => app.close(resolve)));
  return `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
}
