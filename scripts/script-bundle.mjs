// A bundle as a script that V8 can cache (src/cli/bundle-script.ts says why): esbuild's module of a
// bundle, one file, becomes `NAME.script.js`, and `NAME.js` the module that runs it. Used by
// scripts/build-cli.mjs (the command line's bundle, serve's and the threads'), scripts/bundle-typebox.mjs
// and scripts/bundle-tap.mjs (the test framework every test process loads).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';

/** What runs a bundle's script (src/cli/bundle-script.ts): every script's module imports it. */
export const kScriptRunner = fileURLToPath(new URL('../dist/src/cli/bundle-script.js', import.meta.url));

/**
 * A bundle as a script that V8 can cache (src/cli/bundle-script.ts): esbuild's module `js` (one file, no
 * pieces) becomes `NAME.script.js`, one async function of its code: its import declarations become
 * constants of what the function receives (`__fw.imports`, hoisted, as imports are), `import.meta`
 * becomes `__fw.meta`, `import(...)` becomes `__fw.import(...)`, and its export list the function's
 * result. `NAME.js` imports what the declarations named, in their order, and runs the script. Every line
 * keeps its number, so the bundle's source map (renamed with it) still places each line.
 */
function asScript(name, js, outdir) {
  const body = js.replace(/\n\/\/# sourceMappingURL=\S+\n$/, '\n');
  if (/__fw(?!\.bundled\.set\()/.test(body)) throw new Error(`${name}: the bundle names __fw, the script's own parameter`);
  const specs = [];
  const header = [];
  const edits = [];
  let exported = null;
  const blank = (node) => edits.push([node.start, node.end, body.slice(node.start, node.end).replace(/[^\n]/g, '')]);
  const ast = parse(body, { ecmaVersion: 'latest', sourceType: 'module' });
  for (const node of ast.body) {
    if (node.type === 'ImportDeclaration') {
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
  // import.meta and import(...) wherever they are: a walk of every node (acorn-walk is not needed for two kinds).
  const visit = (node) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    if (node.type === 'MetaProperty' && node.meta.name === 'import') edits.push([node.start, node.end, '__fw.meta']);
    if (node.type === 'ImportExpression') edits.push([node.start, node.start + 'import'.length, '__fw.import']);
    for (const key in node) if (key !== 'type' && typeof node[key] === 'object') visit(node[key]);
  };
  visit(ast.body);
  let text = body;
  for (const [start, end, replacement] of edits.sort((a, b) => b[0] - a[0])) text = text.slice(0, start) + replacement + text.slice(end);
  const result = `{ ${(exported ?? []).map(([as, local]) => `${JSON.stringify(as)}: ${local}`).join(', ')} }`;
  const script = `(async function (__fw) {"use strict"; ${header.join(' ')}${text}\nreturn ${result};\n})\n//# sourceMappingURL=${name}.script.js.map\n`;
  const loader = relative(outdir, kScriptRunner);
  const stub = [
    `// Made by scripts/script-bundle.mjs: runs ${name}.script.js, the bundle, with V8's code cache (src/cli/bundle-script.ts).`,
    `import { runBundleScript } from ${JSON.stringify(`./${loader}`)};`,
    ...specs.map((spec, i) => `import * as i${i} from ${JSON.stringify(spec)};`),
    'const links = {',
    `  imports: [${specs.map((_, i) => `i${i}`).join(', ')}],`,
    '  meta: import.meta,',
    '  bundled: new Map(),',
    '  import: (specifier) => (links.bundled.has(specifier) ? Promise.resolve(links.bundled.get(specifier)) : import(specifier)),',
    '};',
    `const exported = await runBundleScript(new URL(${JSON.stringify(`./${name}.script.js`)}, import.meta.url), links);`,
    `const { ${(exported ?? []).map(([as], i) => `${JSON.stringify(as)}: e${i}`).join(', ')} } = exported;`,
    `export { ${(exported ?? []).map(([as], i) => `e${i} as ${/^[A-Za-z_$][\w$]*$/.test(as) ? as : JSON.stringify(as)}`).join(', ')} };`,
    '',
  ].join('\n');
  return { script, stub };
}

/**
 * Writes esbuild's output of one bundle (`outputFiles`: the module `name.js` and its map, unwritten) to
 * `outdir` as `name.script.js`, its map, and the module `name.js` that runs it (asScript).
 */
export function writeScriptBundle(outputFiles, name, outdir) {
  const js = outputFiles.find((file) => file.path.endsWith(`/${name}.js`)).text;
  const map = outputFiles.find((file) => file.path.endsWith(`/${name}.js.map`)).text;
  const { script, stub } = asScript(name, js, outdir);
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, `${name}.script.js`), script);
  writeFileSync(join(outdir, `${name}.script.js.map`), map);
  writeFileSync(join(outdir, `${name}.js`), stub);
}
