// What the packages' scripts share (pack-provider.mjs, pack-edge.mjs): a source file's declarations made
// from that file alone, and a package's last steps: its manifest, README and licence written, then
// `npm pack` into the folder after `--out` (dist/ by default), whose tarball's path is printed last.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;

/**
 * `fileName`'s declarations (TypeScript's transpileDeclaration under isolatedDeclarations): no program of
 * what it imports, and a declaration whose type would need one fails the pack rather than becoming `any`.
 * `stripInternal`: members marked @internal left out.
 */
export function declarations(fileName, what, stripInternal = false) {
  const { outputText, diagnostics = [] } = ts.transpileDeclaration(readFileSync(fileName, 'utf8'), {
    fileName,
    reportDiagnostics: true,
    compilerOptions: {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      isolatedDeclarations: true,
      stripInternal,
    },
  });
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' };
    throw new Error(`${what}'s declarations need a type written out:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
  return outputText;
}

/** Writes the package at `pkg` (its manifest, `readme` from docs/ as README.md, the licence), packs it, prints the tarball's path. */
export function writeAndPack(pkg, manifest, readme) {
  writeFileSync(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(root, readme), join(pkg, 'README.md'));
  copyFileSync(join(root, 'src/provider/LICENSE'), join(pkg, 'LICENSE'));
  const at = process.argv.indexOf('--out');
  const out = at >= 0 && process.argv[at + 1] !== undefined ? resolve(process.argv[at + 1]) : join(root, 'dist');
  mkdirSync(out, { recursive: true });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: pkg, encoding: 'utf8' }));
  console.log(join(out, packed[0].filename));
}
