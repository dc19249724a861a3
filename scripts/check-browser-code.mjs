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
// options, as if they were browser modules. test/web-console/browser/no-node.test.ts imports
// checkBrowserCode instead and gives it probes: the same check, in the test's process.
import { createRequire } from 'node:module';
import { pathToFileURL, fileURLToPath } from 'node:url';

// Required, not imported: Node 20's import of TypeScript's one 9 MB CommonJS file first pre-parses it for
// its named exports, about 0.6 CPU s more (test/helpers/typescript.ts).
const ts = createRequire(import.meta.url)('typescript');

const kRoot = fileURLToPath(new URL('../', import.meta.url));
const kConfig = `${kRoot}src/web-console/browser/tsconfig.json`;
/** A file of Node's declarations (@types/node), which an import of a package's types can load. */
const kNodeDeclarations = /[\\/]node_modules[\\/]@types[\\/]node[\\/]/;
/** Said when Node's declarations were loaded: the types are checked once the imports above are gone. */
export const kNodeDeclaredNote =
  "These imports load Node's declarations into the program, so its types were not checked: they are once the imports are gone.";
/** What the browser's program may read besides TypeScript's own libraries. */
const kAllowed = [`${kRoot}src/`, `${kRoot}node_modules/@sinclair/typebox/`];

/**
 * The browser modules and `extraFiles` checked as browser code: exit status 0 or 1, the report (empty
 * when 0), and `program`, which a later check may be given as `previous`. TypeScript's builder then
 * takes the earlier check's verdict on every file whose program around it has not changed (what
 * `tsc --incremental` does): the test's probes, modules no browser module imports, are all it checks
 * again, about a quarter of a whole check's CPU. A change that reaches every file (Node's
 * declarations loaded) checks every file again.
 *
 * With no `previous`, `fromBuild` starts from the last build's verdicts (the tsBuildInfoFile) and
 * leaves that file as it is; `persist` (the build's own check) starts from them and writes them back.
 * Either way the builder checks again every file whose program changed since (the probes, a module
 * edited since the build): the verdicts are TypeScript's own.
 */
export function checkBrowserCode(extraFiles = [], previous = undefined, { persist = false, fromBuild = false } = {}) {
  const unrecoverable = [];
  const configHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => unrecoverable.push(d) };
  const config = ts.getParsedCommandLineOfConfigFile(kConfig, {}, configHost);
  if (config === undefined || unrecoverable.length > 0) return { code: 1, report: report(unrecoverable), program: undefined };
  // The build's check (`persist`) starts from the last build's verdicts, kept in the tsconfig's
  // tsBuildInfoFile as tsc keeps its own: a build where no browser module changed checks none again.
  const incremental = persist || fromBuild;
  const options = { ...config.options, incremental };
  const host = ts.createIncrementalCompilerHost(options);
  if (previous !== undefined) reuseParses(host, previous.getProgram());
  previous ??= incremental ? ts.readBuilderProgram(options, host) : undefined;
  const program = ts.createSemanticDiagnosticsBuilderProgram([...config.fileNames, ...extraFiles], options, host, previous);
  const outside = foreignImports(program.getProgram(), config.options);
  // A program that an import refused above filled with Node's declarations is refused for those imports
  // alone: its types, checked against Node's globals, would pass where the browser's fail. Such a program
  // holds the server's modules, and checking their types was most of the check's time (about 6 of
  // no-node.test.ts's 8 s of wall).
  const files = program.getProgram().getSourceFiles();
  const nodeDeclared = outside.length > 0 && files.some((file) => kNodeDeclarations.test(file.fileName));
  // What ts.getPreEmitDiagnostics answers for a program, asked of the builder so that it can reuse them.
  const diagnostics = ts.sortAndDeduplicateDiagnostics([
    ...config.errors,
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...(nodeDeclared ? [] : program.getSemanticDiagnostics()),
  ]);
  if (persist) program.emitBuildInfo();
  if (diagnostics.length === 0 && outside.length === 0) return { code: 0, report: '', program };
  return { code: 1, report: report(diagnostics, outside, nodeDeclared), program };
}

/**
 * Makes `host` answer a file whose text is unchanged with `earlier`'s parse of it, as TypeScript's watch
 * and language service do: a check given the one before then parses only the files it adds (the probes,
 * a module edited since) instead of every file again, the DOM library's 2 MB included (about a quarter
 * of no-node.test.ts's CPU was parsing). The builder still decides from the files' versions, which the
 * earlier parse carries, what it checks again.
 */
function reuseParses(host, earlier) {
  const parse = host.getSourceFile;
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
    const parsed = shouldCreateNewSourceFile ? undefined : earlier.getSourceFile(fileName);
    if (parsed !== undefined && host.readFile(fileName) === parsed.text) return parsed;
    return parse(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile);
  };
}

/** `file imports 'module'` for every import in the program of something outside kAllowed. */
function foreignImports(program, options) {
  const found = [];
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile) continue;
    for (const { fileName: specifier } of ts.preProcessFile(file.text, true, true).importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file.fileName, options, ts.sys).resolvedModule;
      const path = resolved?.resolvedFileName;
      if (path === undefined || !kAllowed.some((dir) => path.startsWith(dir))) {
        found.push(`${file.fileName.replace(kRoot, '')} imports '${specifier}', which is not browser code`);
      }
    }
  }
  return found;
}

function report(diagnostics, outside = [], nodeDeclared = false) {
  const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => kRoot, getNewLine: () => '\n' };
  return (
    ts.formatDiagnostics(diagnostics, formatHost) +
    outside.map((line) => `${line}\n`).join('') +
    (nodeDeclared ? `${kNodeDeclaredNote}\n` : '') +
    `The web console's browser code (${kConfig.replace(kRoot, '')}) must name nothing of Node's.\n`
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { code, report } = checkBrowserCode(process.argv.slice(2), undefined, { persist: true });
  process.stderr.write(report);
  process.exitCode = code;
}
