// The README and the pages under docs/ stay true to the repository: every relative link and image
// reaches a file of this repository (and a heading, for a `#` anchor), every path named in backticks
// exists, docs/cli.md lists exactly the command lines the CLI has, every Management API route is named
// on a page, and docs/configuration.md names every FLAGWIRE_* setting the code reads: what a new
// capability documents (docs/architecture.md, "Adding a capability").
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { kCliCommands } from '../../src/cli/commands.js';
import { kManagementRoutes } from '../../src/all-routes.js';

const kRepo = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

/** Every file under `dir` (relative to the repository), recursively; `dist` and `node_modules` left out. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(kRepo, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...filesUnder(path));
    } else out.push(path);
  }
  return out;
}

const kPages = ['README.md', ...filesUnder('docs').filter((f) => f.endsWith('.md'))];
const read = (path: string) => readFileSync(join(kRepo, path), 'utf8');

/** The text outside fenced code blocks (links and paths in code are examples, not references). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each blank a `-`; repeats get -1, -2. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6} +(.+)$/gm)) {
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

t.test('every relative link and image of the README and docs/ reaches this repository', async (t) => {
  let links = 0;
  for (const page of kPages) {
    const text = prose(read(page));
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      links++;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(kRepo, page) : resolve(kRepo, dirname(page), path);
      const where = `${page}: ${target}`;
      t.notOk(relative(kRepo, file).startsWith('..'), `${where} stays inside the repository (a clone has nothing beside it)`);
      t.ok(existsSync(file), `${where} exists`);
      if (anchor !== undefined && existsSync(file) && statSync(file).isFile() && file.endsWith('.md')) {
        t.ok(anchors(readFileSync(file, 'utf8')).has(anchor), `${where}: the heading exists`);
      }
    }
  }
  t.ok(links > 50, `the pages link to each other (${links} links)`);
  t.notOk(/\]\([^)]*shared\//.test(read('README.md')), 'the README links nothing under shared/');
});

t.test('every path the pages name in backticks exists', async (t) => {
  const testFiles = new Set(filesUnder('test').map((f) => f.split('/').pop()!));
  for (const page of kPages.filter((p) => !p.startsWith('docs/spec/'))) {
    const text = prose(read(page));
    for (const m of text.matchAll(/`((?:src|test|scripts|bench|docs)\/[^`\s*]+)`/g)) {
      t.ok(existsSync(join(kRepo, m[1]!)), `${page}: ${m[1]} exists`);
    }
    // The reliability table names the files of test/reliability/ by their name alone.
    for (const m of text.matchAll(/`([\w-]+\.test\.ts)`/g)) t.ok(testFiles.has(m[1]!), `${page}: ${m[1]} is a test file`);
  }
});

t.test('every src/ or test/ path the pages name, in backticks or not, and every entry of a tree of src/ exists', async (t) => {
  let trees = 0;
  for (const page of kPages.filter((p) => !p.startsWith('docs/spec/'))) {
    const markdown = read(page);
    for (const m of prose(markdown).matchAll(/(?<![\w./-])(?:src|test)\/[\w./-]*\w/g))
      t.ok(existsSync(join(kRepo, m[0])), `${page}: ${m[0]} exists`);
    // A layout drawn as a tree (design.md's): `src/` on a line of its own, then its entries indented,
    // each line starting with one or more names (`flags/ tokens/ ...`, `writer/thread/`, `config.ts`).
    for (const block of markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```$/gm)) {
      const lines = block[1]!.split('\n');
      const at = lines.indexOf('src/');
      if (at === -1) continue;
      trees++;
      for (const line of lines.slice(at + 1)) {
        const entries = /^ {2}((?:[\w.-]+(?:\/[\w.-]+)*\/? )*[\w.-]+(?:\/[\w.-]+)*\/?)(?: {2,}|$)/.exec(line);
        if (!line.startsWith(' ')) break; // the tree of src/ ends at the next top-level entry
        if (!line.startsWith('   ')) t.ok(entries !== null, `${page}: the tree's line "${line}" starts with its entries`);
        if (entries === null) continue;
        for (const name of entries[1]!.split(' '))
          if (name !== '...') t.ok(existsSync(join(kRepo, 'src', name)), `${page}: the tree's src/${name} exists`);
      }
    }
  }
  t.ok(trees > 0, "design.md's layout is checked");
});

t.test('docs/cli.md lists exactly the command lines of the CLI', async (t) => {
  const cli = read('docs/cli.md');
  const block = /## Commands\n[\s\S]*?```\n([\s\S]*?)```/.exec(cli)?.[1] ?? '';
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  const usages = kCliCommands.map((c) => c.usage);
  for (const usage of usages) {
    t.ok(
      lines.some((l) => l === usage || l.startsWith(`${usage}  `) || l.startsWith(`${usage} ->`)),
      `lists: ${usage}`,
    );
  }
  t.equal(lines.length, usages.length, 'one line per command, nothing else');
});

t.test('every Management API route is named on a page under docs/, as `METHOD /path`', async (t) => {
  const docs = kPages
    .filter((p) => p.startsWith('docs/'))
    .map(read)
    .join('\n');
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  t.ok(kManagementRoutes.length > 0);
  for (const route of kManagementRoutes) {
    // A parameter as the pages write it, `{id}` or `{flag_id}`; a query or a list of values may follow.
    const path = route.path.pattern
      .split(/(:\w+)/)
      .map((part) => (part.startsWith(':') ? '\\{[^}`]+\\}' : escaped(part)))
      .join('');
    t.ok(new RegExp(`\`${route.method} ${path}[\`?[]`).test(docs), `${route.method} ${route.path.pattern}`);
  }
});

t.test('docs/configuration.md names every FLAGWIRE_* setting the code reads, and only real ones', async (t) => {
  const config = read('docs/configuration.md');
  // The switches only tests and the bench set (src/test-switches.ts) are architecture.md's, not the user's page.
  const architecture = read('docs/architecture.md');
  const testSection = /\n## Test switches\n([\s\S]*?)\n## /.exec(architecture)?.[1] ?? '';
  const named = (text: string) => new Set([...text.matchAll(/FLAGWIRE_[A-Z0-9_]*[A-Z0-9]/g)].map((m) => m[0]));
  const isTestSwitch = (name: string) => name.startsWith('FLAGWIRE_TEST_');
  const src = named(
    filesUnder('src')
      .filter((f) => f.endsWith('.ts'))
      .map(read)
      .join('\n'),
  );
  for (const name of src) {
    if (name === 'FLAGWIRE_TEST') continue; // the prefix, as in FLAGWIRE_TEST_*
    if (isTestSwitch(name)) t.ok(testSection.includes(`\`${name}\``), `${name} (read in src/) is documented with the test switches`);
    else t.ok(config.includes(`\`${name}\``), `${name} (read in src/) is documented`);
  }
  for (const name of named(config)) t.notOk(isTestSwitch(name), `${name}: configuration.md lists only the user's settings`);
  const everywhere = named(
    ['src', 'test', 'scripts', 'bench']
      .flatMap(filesUnder)
      .filter((f) => /\.(ts|sh|mjs)$/.test(f))
      .map(read)
      .join('\n') + read('package.json'),
  );
  for (const name of named(config + testSection)) t.ok(everywhere.has(name), `${name} (documented) is read somewhere`);
});

t.test('each page under docs/ says what it is for right below its title', async (t) => {
  for (const page of kPages.filter((p) => p.startsWith('docs/') && !p.startsWith('docs/spec/'))) {
    const lines = read(page).split('\n');
    t.match(lines[0], /^# \S/, `${page} starts with its title`);
    t.equal(lines[1], '', `${page}: a blank line`);
    t.match(lines[2], /^\S.*\S$/, `${page}: then one line saying what it is for`);
  }
});

t.test('the README names the dependencies whose install scripts npm leaves to allowScripts, as package-lock.json has them', async (t) => {
  // npm (11.19) counts and names the installed packages whose lock entry has an install script.
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const names = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .sort();
  t.ok(names.length > 0, `the lock file names some (${names.join(', ')})`);
  const readme = read('README.md');
  const said = /install-scripts (\d+) packages have install scripts[\s\S]*?\n\n/.exec(readme);
  t.ok(said !== null, "the README quotes npm's warning");
  t.equal(Number(said?.[1]), names.length, 'with the count npm gives');
  const paragraph = said?.[0].replace(/\s+/g, ' ') ?? '';
  const named = /naming ((?:`[^`]+`(?:, | and )?)+)/.exec(paragraph)?.[1] ?? '';
  t.strictSame([...named.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort(), names, 'and the packages it names');
});
