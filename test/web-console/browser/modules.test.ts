// The console's browser modules as the server serves them (dist/src/web-console/browser/*.js, listed by
// src/web-console/assets.ts): each imports only its siblings, the only scripts a browser can fetch from
// /console/assets/. A value imported from the server's code would reach the browser as a 404; a type
// imported from it (views.ts) is erased by tsc and must stay so. The page preloads exactly the modules
// app.js reaches (assets.ts importedModules, read here with TypeScript's own scanner).
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import ts from 'typescript';
import { loadAssets } from '../../../src/web-console/assets.js';

const kServed = new URL('../../../src/web-console/browser/', import.meta.url);

t.test('every served browser module imports only served browser modules', async (t) => {
  const served = readdirSync(kServed).filter((name) => name.endsWith('.js'));
  t.ok(served.includes('app.js') && served.includes('views.js'), 'the build put the modules where the server reads them');
  for (const name of served) {
    // TypeScript's own scanner: static imports, re-exports and import() calls, never a string that looks like one.
    const { importedFiles } = ts.preProcessFile(readFileSync(new URL(name, kServed), 'utf8'), true, true);
    const specifiers = importedFiles.map((f) => f.fileName);
    const foreign = specifiers.filter((s) => !(s.startsWith('./') && served.includes(s.slice(2))));
    t.same(foreign, [], `${name} imports nothing but its siblings`);
  }
});

t.test('the page preloads every module app.js imports, directly or not, and no other', async (t) => {
  const imports = (name: string) =>
    ts.preProcessFile(readFileSync(new URL(name, kServed), 'utf8'), true, true).importedFiles.map((f) => f.fileName.slice(2));
  const reached = new Set<string>();
  const visit = (name: string) => {
    for (const imported of imports(name)) {
      if (!reached.has(imported)) {
        reached.add(imported);
        visit(imported);
      }
    }
  };
  visit('app.js');
  const page = loadAssets().page.toString('utf8');
  const preloaded = [...page.matchAll(/<link rel="modulepreload" href="\/console\/assets\/([^"]+)">/g)].map((m) => m[1]);
  t.ok(reached.has('rule-controls.js') && reached.size > 30, 'the walk reaches the leaves');
  t.same(preloaded, [...reached].sort());
  t.notOk(preloaded.includes('views.js'), 'types only: nothing imports it once compiled');
  t.ok(page.indexOf('<script type="module" src="/console/assets/app.js">') < page.indexOf('modulepreload'), 'the app first');
});

t.test('views.js, the server types the pages read, is empty of code once compiled', async (t) => {
  const code = readFileSync(new URL('views.js', kServed), 'utf8')
    .replace(/\/\/.*$/gm, '')
    .trim();
  t.equal(code, 'export {};');
});
