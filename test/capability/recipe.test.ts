// The recipe for adding a capability (docs/architecture.md, "Adding a capability") names every file a new
// capability touches. Read from the code, not listed here: every part of the Capability interface
// (src/capability/capability.ts) is named in it; every source, test or script that cites the recipe (a
// test that walks the declarations and asks an entry of each new one says so where it starts) is named
// in it, and so is every page under docs/ such a file holds to the declarations; and every path it names
// exists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kRepo = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const read = (path: string) => readFileSync(join(kRepo, path), 'utf8');

/** The source files under `dir` (relative to the repository), recursively. */
function sourcesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(kRepo, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourcesUnder(path));
    else if (/\.(ts|mts|mjs|sh)$/.test(entry.name)) out.push(path);
  }
  return out;
}

const architecture = read('docs/architecture.md');
const recipe = /\n### Adding a capability\n([\s\S]*?)\n##? /.exec(architecture)?.[1] ?? '';
/** Everything the recipe names in backticks. */
const named = new Set([...recipe.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!));

t.test('the recipe is found, and names the one list and its registration line', async (t) => {
  t.ok(recipe.length > 1000, 'docs/architecture.md has the section');
  t.ok(named.has('src/capabilities.ts'), 'the list');
  t.ok(named.has('kCapabilities'), 'its registration line');
});

t.test('every part of the Capability interface is named in the recipe', async (t) => {
  const source = read('src/capability/capability.ts');
  const body = /\nexport interface Capability \{\n([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
  const parts = [...body.matchAll(/^ {2}readonly (\w+)\??:/gm)].map((m) => m[1]!);
  t.ok(parts.length >= 15, `${parts.length} parts read from the interface`);
  for (const part of parts) t.ok(named.has(part), `\`${part}\` is named`);
});

t.test('every file that cites the recipe is named in it, with the pages it holds to the declarations', async (t) => {
  const citing = ['src', 'test', 'scripts'].flatMap(sourcesUnder).filter((path) => read(path).includes('"Adding a capability"'));
  t.ok(citing.length >= 5, `${citing.length} files cite it`);
  for (const path of citing) {
    t.ok(named.has(path), `${path} cites the recipe and is named in it`);
    for (const m of read(path).matchAll(/'(docs\/[\w/-]+\.md)'/g))
      if (m[1] !== 'docs/architecture.md') t.ok(named.has(m[1]!), `${path} holds ${m[1]} to the declarations: it is named`);
  }
});

t.test('every path the recipe names exists', async (t) => {
  const paths = [...named].filter((name) => /^(src|test|docs|scripts)\/[^\s*]+$/.test(name));
  t.ok(paths.length >= 20, `${paths.length} paths named`);
  for (const path of paths) t.ok(existsSync(join(kRepo, path)), `${path} exists`);
});
