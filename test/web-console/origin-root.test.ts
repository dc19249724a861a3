// What a browser asks of the server's origin itself (issue 41, item 7): `/` typed in the address bar is
// sent to the console, while an API client (no text/html in Accept) keeps the JSON 404 any unknown path
// gets; /favicon.ico is a real 16 x 16 icon, not a JSON 404. And the console's own files under
// /console/assets/, its source map among them (read on its first request). Black-box: the real server and fetch.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { kConsoleCss } from '../../src/web-console/style.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server } = await startWorldServer(t);
const base = server.baseUrl;

/** What Chromium sends when the user opens an address. */
const kBrowserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

t.test('/ sends a browser to the console and API clients a 404; /favicon.ico is an icon', async (t) => {
  const browser = await fetch(`${base}/`, { headers: { accept: kBrowserAccept }, redirect: 'manual' });
  t.equal(browser.status, 302, 'a browser is redirected');
  t.equal(browser.statusText, 'Found', "with 302's reason phrase");
  t.equal(await browser.text(), 'Found: the web console is at /console\n', 'and a body that says where');
  t.equal(browser.headers.get('location'), '/console', 'to the console');
  t.equal(browser.headers.get('vary'), 'Accept', 'an answer that depends on Accept says so');
  const followed = await fetch(`${base}/`, { headers: { accept: kBrowserAccept } });
  t.equal(followed.status, 200);
  t.match(followed.headers.get('content-type'), /^text\/html/);
  t.match(await followed.text(), /<title>Flagwire console<\/title>/, 'and lands on the console page');

  const unknown = await fetch(`${base}/nowhere`);
  const unknownBody = await unknown.text();
  for (const accept of [null, '*/*', 'application/json']) {
    const res = await fetch(`${base}/`, { headers: accept === null ? {} : { accept }, redirect: 'manual' });
    t.equal(res.status, 404, `Accept ${accept}: 404`);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(await res.text(), unknownBody, `Accept ${accept}: the body any unknown path gets`);
    t.equal(res.headers.get('vary'), 'Accept');
  }

  const icon = await fetch(`${base}/favicon.ico`, { headers: { accept: 'image/avif,image/webp,image/*,*/*;q=0.8' } });
  t.equal(icon.status, 200);
  t.equal(icon.headers.get('content-type'), 'image/x-icon');
  const bytes = Buffer.from(await icon.arrayBuffer());
  t.same([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)], [0, 1, 1], 'an ICO with one image');
  t.same([bytes[6], bytes[7], bytes.readUInt16LE(12)], [16, 16, 32], '16 x 16, 32 bits per pixel');
  t.equal(bytes.readUInt32LE(18) + bytes.readUInt32LE(14), bytes.length, 'the image fills the file as its entry says');
  t.equal(bytes.readUInt32LE(22), 40, 'a BMP image (BITMAPINFOHEADER)');
});

t.test("/console/assets/ serves the console's style sheet, script and source map, and nothing else", async (t) => {
  const built = (name: string) => readFileSync(new URL(`../../src/web-console/${name}`, import.meta.url));
  const expected: [string, string, Buffer][] = [
    ['console.css', 'text/css; charset=utf-8', Buffer.from(kConsoleCss)],
    ['console.js', 'text/javascript; charset=utf-8', built('console.js')],
    ['console.js.map', 'application/json', built('console.js.map')],
  ];
  for (const [name, type, bytes] of expected) {
    // Twice: the map's second answer is the copy its first request read.
    for (const time of ['first', 'second']) {
      const res = await fetch(`${base}/console/assets/${name}`);
      t.equal(res.status, 200, `${name}, ${time} time`);
      t.equal(res.headers.get('content-type'), type);
      t.equal(res.headers.get('cache-control'), 'no-cache');
      const body = Buffer.from(await res.arrayBuffer());
      t.ok(body.equals(bytes), `${name}: the bytes built`);
    }
  }
  const map = JSON.parse(built('console.js.map').toString('utf8')) as { sources: string[] };
  t.ok(map.sources.length > 30, 'the map names the browser modules');
  const missing = await fetch(`${base}/console/assets/console.ts`);
  t.equal(missing.status, 404, 'a file it does not have');
  await missing.arrayBuffer();
});
