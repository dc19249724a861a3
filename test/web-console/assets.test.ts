// The console's files as the server holds them (src/web-console/assets.ts), in-process over folders made
// here: the script is read at once, the source map on its first request and then kept, and a map an
// install lacks is null (the route answers 404), never an error thrown in the handler.
import { rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { loadAssets } from '../../src/web-console/assets.js';
import { tempDir } from '../helpers/scratch-dir.js';

const folder = (t: Parameters<typeof tempDir>[0], files: Record<string, string>): URL => {
  const dir = tempDir(t);
  for (const [name, text] of Object.entries(files)) writeFileSync(`${dir}/${name}`, text);
  return pathToFileURL(`${dir}/`);
};

t.test('the source map is read when first asked for, then kept', async (t) => {
  const from = folder(t, { 'console.js': 'script' });
  const map = loadAssets(from).files.get('console.js.map')!;
  // Written after the assets were loaded: only a read at the request finds it.
  writeFileSync(new URL('console.js.map', from), '{"version":3}');
  const first = map.body();
  t.equal(first?.toString('utf8'), '{"version":3}', 'read on its first request, not at the load');
  rmSync(new URL('console.js.map', from));
  t.equal(map.body(), first, 'kept: the second request reads nothing');
});

t.test('a map the install lacks is null, and the other files are served', async (t) => {
  const { files } = loadAssets(folder(t, { 'console.js': 'script' }));
  t.equal(files.get('console.js.map')!.body(), null);
  t.equal(files.get('console.js')!.body()?.toString('utf8'), 'script');
  t.ok((files.get('console.css')!.body()?.length ?? 0) > 0);
});

t.test('the script is read at once: a folder without it fails there, as a node fails to start', async (t) => {
  t.throws(() => loadAssets(folder(t, { 'console.js.map': '{}' })), { code: 'ENOENT' });
});
