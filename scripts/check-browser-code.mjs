// Checks the web console's browser code as browser code, in `npm run build` after the main tsc: its
// tsconfig (src/web-console/browser/tsconfig.json) declares the ES and DOM libraries only, so a Node
// module or global named in a browser module, or in any module it imports (types included), fails here.
//
// tsc alone cannot hold that for imported modules: a package's declarations may say
// `/// <reference types="node" />` (pino's, undici's do), which loads Node's declarations into the whole
// program whatever `types` says, and then `process` or `node:fs` check anywhere in it. So every import
// in the program must also name a project source file or TypeBox (whose declarations are Node-free);
// anything else is reported with the module that imports it.
//
// `node scripts/check-browser-code.mjs [extra.ts ...]` checks the extra files too, under the same
// options, as if they were browser modules (test/web-console/browser/no-node.test.ts gives it probes).
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const kRoot = fileURLToPath(new URL('../', import.meta.url));
const kConfig = `${kRoot}src/web-console/browser/tsconfig.json`;
/** What the browser's program may read besides TypeScript's own libraries. */
const kAllowed = [`${kRoot}src/`, `${kRoot}node_modules/@sinclair/typebox/`];

const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) };
const config = ts.getParsedCommandLineOfConfigFile(kConfig, {}, host);
const program = ts.createProgram([...config.fileNames, ...process.argv.slice(2)], config.options);
const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
const outside = foreignImports(program);
if (diagnostics.length > 0 || outside.length > 0) fail(diagnostics, outside);

/** `file imports 'module'` for every import in the program of something outside kAllowed. */
function foreignImports(program) {
  const found = [];
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile) continue;
    for (const { fileName: specifier } of ts.preProcessFile(file.text, true, true).importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file.fileName, config.options, ts.sys).resolvedModule;
      const path = resolved?.resolvedFileName;
      if (path === undefined || !kAllowed.some((dir) => path.startsWith(dir))) {
        found.push(`${file.fileName.replace(kRoot, '')} imports '${specifier}', which is not browser code`);
      }
    }
  }
  return found;
}

function fail(diagnostics, outside = []) {
  const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => kRoot, getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnostics(diagnostics, formatHost));
  for (const line of outside) process.stderr.write(`${line}\n`);
  process.stderr.write(`The web console's browser code (${kConfig.replace(kRoot, '')}) must name nothing of Node's.\n`);
  process.exit(1);
}
