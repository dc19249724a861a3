// A bundle as a script that V8 can cache (src/cli/bundle-script.ts says why): esbuild's module of a
// bundle, one file, becomes `NAME.script.js`, and `NAME.js` the module that runs it (or `NAME.cjs`, a
// CommonJS module that runs it, for a thread's start). Used by
// scripts/build-cli.mjs (the command line's bundle, serve's and the threads'), scripts/bundle-typebox.mjs,
// scripts/bundle-tap.mjs (the test framework every test process loads) and scripts/bundle-tests.mjs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { build } from 'esbuild';

/** What runs a bundle's script (src/cli/bundle-script.ts): every script's module imports it. */
export const kScriptRunner = fileURLToPath(new URL('../dist/src/cli/bundle-script.js', import.meta.url));

/**
 * Which module of esbuild's bundle `ast` holds the code at a place, if that module runs on use: esbuild
 * heads each module's code with a line comment naming it (a path, or a plugin's name for it), and wraps a
 * module that is imported on use in `var init_NAME = __esm({ "its name"() { ... } })`. Returns, for a
 * place, that function and where the module's code starts and ends; undefined where the module there
 * runs with the script. A one-word comment of a module's own between statements counts as a head too:
 * what follows it then reads as code run with the script, which is never wrong.
 */
function runOnUse(ast, comments) {
  const outside = (at) => !ast.body.some((node) => node.start <= at && at < node.end);
  const heads = comments.filter((c) => c.type === 'Line' && /^ \S+$/.test(c.value) && outside(c.start));
  const inits = new Map();
  for (const node of ast.body) {
    if (node.type !== 'VariableDeclaration') continue;
    for (const { init } of node.declarations) {
      const wrapped = init?.type === 'CallExpression' && init.callee.name === '__esm' ? init.arguments[0]?.properties?.[0] : undefined;
      if (wrapped?.value?.type === 'FunctionExpression') inits.set(wrapped.key.value, wrapped.value);
    }
  }
  return (at) => {
    const i = heads.findLastIndex((c) => c.start < at);
    const init = i === -1 ? undefined : inits.get(heads[i].value.slice(1));
    return init === undefined ? undefined : { init, start: heads[i].start, end: heads[i + 1]?.start ?? Number.POSITIVE_INFINITY };
  };
}

/**
 * esbuild's banner for an ES module bundle of CommonJS code: the packages' require() of built-ins, files
 * and native addons, which an ES module has only if it makes one.
 */
export const kRequireBanner =
  "import { createRequire as flagwireCreateRequire } from 'node:module'; const require = flagwireCreateRequire(import.meta.url);";

/** The keys of a package's exports that a module of ours can export by name (the default apart). */
export const namedExports = (keys) => keys.filter((key) => /^[A-Za-z_$][\w$]*$/.test(key) && key !== 'default');

/** Calls `fn` with every node under `node` (acorn-walk is not needed for what the scripts read of them). */
export function eachNode(node, fn) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) eachNode(n, fn);
    return;
  }
  if (typeof node.type === 'string') fn(node);
  for (const key in node) if (key !== 'type' && typeof node[key] === 'object') eachNode(node[key], fn);
}

/** Where each name is written in `ast` (every Identifier: a reference, a declaration or a property's name). */
function namePlaces(ast) {
  const places = new Map();
  eachNode(ast.body, (node) => {
    if (node.type !== 'Identifier') return;
    const at = places.get(node.name);
    if (at === undefined) places.set(node.name, [node.start]);
    else at.push(node.start);
  });
  return places;
}

/**
 * `text` with each `[start, end, replacement]` of `edits` (none overlapping) made, in one pass: a bundle
 * of the whole source takes thousands of edits, and a copy of the text per edit was most of a build's time.
 */
export function applyEdits(text, edits) {
  const parts = [];
  let at = 0;
  // Two insertions at one place: the later edit first, as when each was made from the end of the text.
  const ordered = edits.map((edit, i) => [...edit, i]).sort((a, b) => a[0] - b[0] || b[3] - a[3]);
  for (const [start, end, replacement] of ordered) {
    parts.push(text.slice(at, start), replacement);
    at = end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

const kNonAscii = /[\u0080-\uffff]/;
const kNonAsciiAll = /[\u0080-\uffff]/g;
/** A UTF-16 code unit as a JavaScript escape (`\u00a7`), as a character past ASCII in a comment is written. */
const escaped = (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Every regular expression literal of `ast`. */
function regexLiterals(ast) {
  const found = [];
  eachNode(ast.body, (node) => {
    if (node.type === 'Literal' && node.regex !== undefined) found.push(node);
  });
  return found;
}

/**
 * A bundle as a script that V8 can cache (src/cli/bundle-script.ts): esbuild's module `js` (one file, no
 * pieces) becomes `NAME.script.js`, one async function of its code: its import declarations become
 * constants of what the function receives (`__fw.imports`, hoisted, as imports are), `import.meta`
 * becomes `__fw.meta`, `import(...)` becomes `__fw.import(...)`, and its export list the function's
 * result: what runs it (moduleStub, commonJsStub) imports what the declarations named, in their order,
 * and runs the script. Every line keeps its number, so the bundle's source map (renamed with it) still
 * places each line.
 *
 * A Node built-in that only modules run on use import (esbuild wraps each such module in an `__esm`
 * function that runs it once, when it is first imported) is required as that function starts, not
 * imported with the script: in one file with no pieces, esbuild lifts every module's imports to the
 * top, so the writer thread loaded node:http, node:https, node:http2 and node:zlib for the webhook
 * deliverer, the relay's upstream and the gRPC server it never runs (a visible part of a worker thread's
 * start: issue 57, item 2). Its names become the script's `var`s (no TDZ check where
 * a hot path reads them) and take their values from `__fw.builtin` (a require) before the module's code.
 *
 * The script is ASCII, which src/cli/bundle-script.ts reads faster: a character past ASCII in a comment
 * or a regular expression becomes an escape, and one anywhere else fails the build.
 */
function asScript(name, js) {
  const body = js.replace(/\n\/\/# sourceMappingURL=\S+\n$/, '\n');
  if (/__fw(?!\.bundled\.set\()/.test(body)) throw new Error(`${name}: the bundle names __fw, the script's own parameter`);
  const specs = [];
  const header = [];
  const edits = [];
  let exported = null;
  const blank = (node) => edits.push([node.start, node.end, body.slice(node.start, node.end).replace(/[^\n]/g, '')]);
  const comments = [];
  const ast = parse(body, { ecmaVersion: 'latest', sourceType: 'module', onComment: comments });
  // The script is ASCII, so that it is read as such (src/cli/bundle-script.ts: scriptText). esbuild
  // escapes every character past ASCII in strings, templates and names (its charset is ASCII), but keeps
  // comments and regular expressions as they are: their characters become escapes too, by UTF-16 code
  // unit, which is inert text in a comment and matches the same in a pattern, with or without the `u`
  // flag (only its `source` reads otherwise). First among the edits, so that an insertion where one
  // starts goes before it.
  const pastAscii = [
    ...comments.map((comment) => [comment.start, comment.end]),
    ...regexLiterals(ast).map((literal) => [literal.start, literal.end]),
  ];
  for (const [start, end] of pastAscii) {
    const raw = body.slice(start, end);
    if (kNonAscii.test(raw)) edits.push([start, end, raw.replace(kNonAsciiAll, escaped)]);
  }
  const moduleAt = runOnUse(ast, comments);
  const places = namePlaces(ast);
  const lazy = new Map();
  for (const node of ast.body) {
    // A namespace import stays with the script (a module's namespace is not what require returns), and so
    // does one whose names are written anywhere outside its module's code.
    const lazyBuiltin =
      node.type === 'ImportDeclaration' &&
      node.source.value.startsWith('node:') &&
      node.specifiers.every((s) => s.type !== 'ImportNamespaceSpecifier');
    const owner = lazyBuiltin ? moduleAt(node.start) : undefined;
    const init =
      owner !== undefined && node.specifiers.every((s) => places.get(s.local.name).every((at) => owner.start < at && at < owner.end))
        ? owner.init
        : undefined;
    if (init !== undefined) {
      const from = `__fw.builtin(${JSON.stringify(node.source.value)})`;
      const named = [];
      for (const s of node.specifiers) {
        header.push(`var ${s.local.name};`);
        if (s.type === 'ImportDefaultSpecifier') lazy.set(init, `${lazy.get(init) ?? ''} ${s.local.name} = ${from};`);
        else named.push(`${JSON.stringify(s.imported.name ?? s.imported.value)}: ${s.local.name}`);
      }
      if (named.length > 0) lazy.set(init, `${lazy.get(init) ?? ''} ({ ${named.join(', ')} } = ${from});`);
      blank(node);
    } else if (node.type === 'ImportDeclaration') {
      const spec = node.source.value;
      if (!specs.includes(spec)) specs.push(spec);
      const from = `__fw.imports[${specs.indexOf(spec)}]`;
      const named = [];
      for (const s of node.specifiers) {
        if (s.type === 'ImportNamespaceSpecifier') header.push(`const ${s.local.name} = ${from};`);
        else if (s.type === 'ImportDefaultSpecifier') header.push(`const ${s.local.name} = ${from}.default;`);
        else named.push(`${JSON.stringify(s.imported.name ?? s.imported.value)}: ${s.local.name}`);
      }
      if (named.length > 0) header.push(`const { ${named.join(', ')} } = ${from};`);
      blank(node);
    } else if (node.type === 'ExportNamedDeclaration' && node.declaration === null && node.source === null) {
      exported = node.specifiers.map((s) => [s.exported.name ?? s.exported.value, s.local.name]);
      blank(node);
    } else if (node.type.startsWith('Export')) {
      throw new Error(`${name}: an export the script cannot return (${node.type})`);
    }
  }
  // import.meta and import(...) wherever they are.
  eachNode(ast.body, (node) => {
    if (node.type === 'MetaProperty' && node.meta.name === 'import') edits.push([node.start, node.end, '__fw.meta']);
    if (node.type === 'ImportExpression') edits.push([node.start, node.start + 'import'.length, '__fw.import']);
  });
  for (const [init, assignments] of lazy) edits.push([init.body.start + 1, init.body.start + 1, assignments]);
  const text = applyEdits(body, edits);
  const result = `{ ${(exported ?? []).map(([as, local]) => `${JSON.stringify(as)}: ${local}`).join(', ')} }`;
  const script = `(async function (__fw) {"use strict"; ${header.join(' ')}${text}\nreturn ${result};\n})\n//# sourceMappingURL=${name}.script.js.map\n`;
  const stray = kNonAscii.exec(script);
  if (stray !== null)
    throw new Error(
      `${name}: a character past ASCII outside a comment, at ${stray.index}: ${JSON.stringify(script.slice(stray.index - 40, stray.index + 40))}`,
    );
  return { script, specs, exported: (exported ?? []).map(([as]) => as) };
}

/** `NAME.js`, the ES module that runs the script `NAME.script.js` and exports what it returns. */
function moduleStub(name, specs, exported, outdir) {
  return [
    `// Made by scripts/script-bundle.mjs: runs ${name}.script.js, the bundle, with V8's code cache (src/cli/bundle-script.ts).`,
    `import { requireBuiltin, runBundleScript } from ${JSON.stringify(specifierFrom(outdir, kScriptRunner))};`,
    ...specs.map((spec, i) => `import * as i${i} from ${JSON.stringify(spec)};`),
    'const links = {',
    `  imports: [${specs.map((_, i) => `i${i}`).join(', ')}],`,
    '  meta: import.meta,',
    '  builtin: requireBuiltin,',
    '  bundled: new Map(),',
    '  import: (specifier) => (links.bundled.has(specifier) ? Promise.resolve(links.bundled.get(specifier)) : import(specifier)),',
    '};',
    `const exported = await runBundleScript(new URL(${JSON.stringify(`./${name}.script.js`)}, import.meta.url), links);`,
    `const { ${exported.map((as, i) => `${JSON.stringify(as)}: e${i}`).join(', ')} } = exported;`,
    `export { ${exported.map((as, i) => `e${i} as ${/^[A-Za-z_$][\w$]*$/.test(as) ? as : JSON.stringify(as)}`).join(', ')} };`,
    '',
  ].join('\n');
}

/** What runs a bundle's script from a CommonJS module (commonJsStub): src/cli/bundle-script.ts, made CommonJS. */
const kCommonJsRunner = fileURLToPath(new URL('../dist/src/cli/bundle/bundle-script.cjs', import.meta.url));

/** Writes kCommonJsRunner, from the runner's module (kScriptRunner): before any bundle with a CommonJS module. */
export async function writeCommonJsRunner() {
  await build({
    entryPoints: [kScriptRunner],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    outfile: kCommonJsRunner,
    // The runner's own URL, which it makes its require of built-ins from.
    banner: { js: 'const flagwireOwnUrl = require("node:url").pathToFileURL(__filename).href;' },
    define: { 'import.meta.url': 'flagwireOwnUrl' },
    logLevel: 'warning',
  });
}

/**
 * `NAME.cjs`, a CommonJS module that runs the script `NAME.script.js`, for a thread's start: a thread
 * that imports no ES module never loads Node's ES module loader and its start-up CPU (issue 57, item 2). `twins` names the ES modules that have a CommonJS twin to require
 * instead, whether the script imports them statically (uWebSockets.js) or on use (the store's packages,
 * whose twin exports the promise of what they export). What the script imports statically is required
 * (built-ins, CommonJS packages, twins: anything else fails the build), each as its exports and they as
 * its default export, as an import of a CommonJS module reads. Its
 * exports: where the script exports a default function (a piscina worker's handler), a function that
 * calls it once the script has run; otherwise the promise of the script's exports.
 */
function commonJsStub(name, specs, exported, outdir, twins) {
  const require = createRequire(stubPath(outdir, name, 'commonjs'));
  const required = specs.map((spec) => twins[spec] ?? spec);
  for (const [i, spec] of required.entries()) {
    try {
      require.resolve(spec);
    } catch {
      throw new Error(`${name}: its CommonJS module cannot require ${specs[i]}, an ES module (give it a CommonJS twin: twins)`);
    }
  }
  const twinned = Object.entries(twins).map(
    ([spec, twin]) => `specifier === ${JSON.stringify(spec)} ? Promise.resolve(require(${JSON.stringify(twin)})) : `,
  );
  return [
    `// Made by scripts/script-bundle.mjs: runs ${name}.script.js, the bundle, with V8's code cache (src/cli/bundle-script.ts),`,
    '// from CommonJS, so that the thread it starts loads no ES module loader.',
    "'use strict';",
    `const { runBundleScript } = require(${JSON.stringify(specifierFrom(outdir, kCommonJsRunner))});`,
    "const { pathToFileURL } = require('node:url');",
    'const asImported = (exports) => ({ __proto__: exports, default: exports });',
    'const links = {',
    `  imports: [${required.map((spec) => `asImported(require(${JSON.stringify(spec)}))`).join(', ')}],`,
    '  meta: { url: pathToFileURL(__filename).href },',
    '  builtin: require,',
    '  bundled: new Map(),',
    `  import: (specifier) => (links.bundled.has(specifier) ? Promise.resolve(links.bundled.get(specifier)) : ${twinned.join('')}import(specifier)),`,
    '};',
    `const exported = runBundleScript(new URL(${JSON.stringify(`./${name}.script.js`)}, links.meta.url), links);`,
    exported.includes('default')
      ? 'module.exports = (...args) => exported.then((script) => script.default(...args));'
      : 'module.exports = exported;',
    '',
  ].join('\n');
}

/** How a module in `dir` imports or requires the file at `path`: a specifier relative to it. */
export function specifierFrom(dir, path) {
  return `./${relative(dir, path)}`;
}

/** Where writeScriptBundle writes the stub of `kind` ('module' or 'commonjs') that runs bundle `name` in `outdir`. */
export function stubPath(outdir, name, kind) {
  return join(outdir, `${name}.${kind === 'commonjs' ? 'cjs' : 'js'}`);
}

/**
 * Writes esbuild's output of one bundle (`outputFiles`: the module `name.js` and its map, unwritten) to
 * `outdir` as `name.script.js`, its map, and what runs it (asScript): the ES module `name.js`, the
 * CommonJS module `name.cjs` (commonJsStub, with its `twins`), or both, as `stubs` asks.
 */
export function writeScriptBundle(outputFiles, name, outdir, { stubs = ['module'], twins = {} } = {}) {
  const js = outputFiles.find((file) => file.path.endsWith(`/${name}.js`)).text;
  const map = outputFiles.find((file) => file.path.endsWith(`/${name}.js.map`)).text;
  const { script, specs, exported } = asScript(name, js);
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, `${name}.script.js`), script);
  writeFileSync(join(outdir, `${name}.script.js.map`), map);
  if (stubs.includes('module')) writeFileSync(stubPath(outdir, name, 'module'), moduleStub(name, specs, exported, outdir));
  if (stubs.includes('commonjs')) writeFileSync(stubPath(outdir, name, 'commonjs'), commonJsStub(name, specs, exported, outdir, twins));
}

// Where the built code finds the packages it takes from files the build makes: the command line's and
// serve's bundles (build-cli.mjs) and the tests' copies (bundle-tests.mjs).

/** Where build-cli.mjs writes the command line's, serve's and the threads' bundles, and these packages' files. */
export const kBundleDir = fileURLToPath(new URL('../dist/src/cli/bundle/', import.meta.url));
const kProjectRequire = createRequire(new URL('../package.json', import.meta.url));

/**
 * lmdb and msgpackr, with the packages they require, as one script V8 caches (build-cli.mjs,
 * buildStorePackages): every thread of a node and every store command takes them from it.
 */
export const kStorePackages = ['lmdb', 'msgpackr'];
export const kStorePackagesName = 'store-packages';
/** The module that runs the store packages' script: its exports are the packages, by name. */
export const kStorePackagesModule = stubPath(kBundleDir, kStorePackagesName, 'module');
/** Its CommonJS twin, which a thread or process started from CommonJS requires instead (build-cli.mjs, kStartedStub). */
export const kStorePackagesTwin = stubPath(kBundleDir, kStorePackagesName, 'commonjs');
/** uWebSockets.js, an ES module only, as CommonJS (build-cli.mjs, writeUwsTwin). */
export const kUwsTwin = join(kBundleDir, 'uws.cjs');

/**
 * The source of a module at `dir` whose exports are the store package `name`'s, taken from the store
 * packages' module where it runs (awaited there, as a require would be: a command loads them on use).
 */
export function storePackageSource(name, dir) {
  const names = namedExports(Object.keys(kProjectRequire(name)));
  return [
    `const required = (await import(${JSON.stringify(specifierFrom(dir, kStorePackagesModule))}))[${JSON.stringify(name)}];`,
    ...names.map((key) => `export const ${key} = required.${key};`),
    'export default required;',
  ].join('\n');
}
