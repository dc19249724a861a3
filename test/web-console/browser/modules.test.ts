// The console's browser code as the server serves it (src/web-console/assets.ts): the modules tsc writes
// (dist/src/web-console/browser/*.js) import only their siblings and the words the server shares with
// them (dist/src/words/*.js, which import only each other), a type from the server's code
// (views.ts) is erased by tsc and must stay so, and esbuild bundles app.js with everything it reaches into
// the one script the page loads (scripts/bundle-console.mjs), which refuses a module that imports anything
// else: server code never reaches a page.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadAssets } from '../../../src/web-console/assets.js';
import { ts } from '../../helpers/typescript.js';

const kSrc = new URL('../../../src/', import.meta.url);
const kServed = new URL('web-console/browser/', kSrc);
const kRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** What scripts/bundle-console.mjs exports (a JavaScript module: its shape is declared here). */
interface ConsoleBundle {
  bundleConsole(options: {
    entry?: string;
    outfile?: string;
    write?: boolean;
  }): Promise<{ outputFiles?: { path: string; text: string }[] }>;
}
const { bundleConsole } = (await import(`${kRoot}scripts/bundle-console.mjs`)) as ConsoleBundle;

/** TypeScript's own scanner: static imports, re-exports and import() calls, never a string that looks like one. */
const importsOf = (text: string) => ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);

/** The compiled modules of a folder under dist/src (its .js files), by their path under src/. */
const modulesOf = (folder: string) =>
  readdirSync(new URL(`${folder}/`, kSrc))
    .filter((name) => name.endsWith('.js'))
    .map((name) => `${folder}/${name}`);
const kBrowserModules = modulesOf('web-console/browser');
const kWordModules = modulesOf('words');

/** What `module` (a path under src/) imports, as paths under src/ (null: a package or something outside src). */
const importedBy = (module: string) =>
  importsOf(readFileSync(new URL(module, kSrc), 'utf8')).map((s) =>
    s.startsWith('.') ? fileURLToPath(new URL(s, new URL(module, kSrc))).replace(fileURLToPath(kSrc), '') : null,
  );

t.test('every browser module imports only browser modules and the shared words; the words only each other', async (t) => {
  t.ok(
    kBrowserModules.includes('web-console/browser/app.js') && kBrowserModules.includes('web-console/browser/views.js'),
    'the build put the modules where the bundle reads them',
  );
  t.ok(kWordModules.includes('words/audit-sentences.js'), 'and the words');
  for (const module of kBrowserModules) {
    const foreign = importedBy(module).filter((m) => m === null || !(kBrowserModules.includes(m) || kWordModules.includes(m)));
    t.same(foreign, [], `${module} imports nothing but browser modules and words`);
  }
  for (const module of kWordModules) {
    const foreign = importedBy(module).filter((m) => m === null || !kWordModules.includes(m));
    t.same(foreign, [], `${module} imports nothing but its siblings`);
  }
});

t.test('the page loads one script: every module app.js reaches, bundled, with a map to their TypeScript', async (t) => {
  const reached = new Set<string>();
  const visit = (module: string) => {
    for (const imported of importedBy(module)) {
      if (imported !== null && !reached.has(imported)) {
        reached.add(imported);
        visit(imported);
      }
    }
  };
  visit('web-console/browser/app.js');
  t.ok(reached.has('web-console/browser/rule-controls.js') && reached.size > 30, 'the walk reaches the leaves');
  t.ok(reached.has('words/audit-sentences.js'), 'and the shared words');
  t.notOk(reached.has('web-console/browser/views.js'), 'types only: nothing imports it once compiled');

  const { page: served, files } = loadAssets();
  const page = served.toString('utf8');
  t.same(
    [...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]),
    ['<script type="module" src="/console/assets/console.js">'],
    'one script, the bundle',
  );
  t.notOk(page.includes('modulepreload'), 'nothing to preload');
  t.same([...files.keys()].sort(), ['console.css', 'console.js', 'console.js.map'], 'what /console/assets/ serves');

  const script = files.get('console.js')!.body()!.toString('utf8');
  t.same(importsOf(script), [], 'the script imports nothing');
  t.match(script, /\n\/\/# sourceMappingURL=console\.js\.map\n?$/, 'it names its map');
  const map = JSON.parse(files.get('console.js.map')!.body()!.toString('utf8')) as { sources: string[]; sourcesContent: string[] };
  const bundled = map.sources.map((s) => s.replace(/^.*\/src\//, '').replace(/\.ts$/, '.js'));
  t.same(
    [...bundled].sort(),
    ['web-console/browser/app.js', ...reached].sort(),
    "the map's sources: app.js and every module it reaches, as TypeScript",
  );
  t.equal(map.sourcesContent.length, map.sources.length, 'each with its text, for the browser to show');
});

t.test('a browser module that imports server code fails the bundle, naming the import', async (t) => {
  // dist/ is the build's, and git-ignored.
  const dir = mkdtempSync(`${kRoot}dist/console-probes-`);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const probe = `${dir}/probe.js`;
  writeFileSync(probe, `import { kRoutes } from '../src/routes/route-table.js';\nexport const routes = kRoutes;\n`);
  const failure = await bundleConsole({ entry: probe, outfile: `${dir}/out.js`, write: false }).then(
    () => null,
    (err: Error) => err.message,
  );
  t.match(failure, "imports '../src/routes/route-table.js', which is not a browser module of the console");
});

t.test('views.js, the server types the pages read, is empty of code once compiled', async (t) => {
  const code = readFileSync(new URL('views.js', kServed), 'utf8')
    .replace(/\/\/.*$/gm, '')
    .trim();
  t.equal(code, 'export {};');
});
