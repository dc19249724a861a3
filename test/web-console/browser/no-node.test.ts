// The console's browser modules (src/web-console/browser/) name nothing that only Node declares: every
// global, import and module they use is declared by TypeScript's own libraries (ES and DOM) or by the
// project's source. This is tsc's answer, asked through its checker, because a DOM-only tsconfig cannot
// give it: views.ts imports the server's answer types, whose modules bring @types/node into any program
// that checks them (docs/web-console.md, Decisions). biome.jsonc refuses the usual Node names as you type;
// this test refuses all of them.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const kRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const kBrowser = `${kRoot}src/web-console/browser/`;

/** The root tsconfig's options: the ones the build checks the browser modules with. */
function rootOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    `${kRoot}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  return { ...parsed!.options, noEmit: true };
}

/** Whether `node` names something on its own (a global, an import, a module), not a member of a value or type. */
function isFreeName(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) {
    // globalThis.process is the global process.
    return ts.isIdentifier(parent.expression) && parent.expression.text === 'globalThis';
  }
  if (ts.isQualifiedName(parent) && parent.right === node) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isMethodDeclaration(parent)) && parent.name === node)
    return false;
  if (ts.isBindingElement(parent) && parent.propertyName === node) return false;
  return true;
}

/** Whether `node` is the module of an import, a re-export, an import type or an import() call. */
function isModuleName(node: ts.StringLiteral): boolean {
  const parent = node.parent;
  return (
    ts.isImportDeclaration(parent) ||
    ts.isExportDeclaration(parent) ||
    (ts.isLiteralTypeNode(parent) && ts.isImportTypeNode(parent.parent)) ||
    (ts.isCallExpression(parent) && parent.expression.kind === ts.SyntaxKind.ImportKeyword)
  );
}

/** Every free name of `file` whose every declaration is outside TypeScript's libraries and the project's source. */
function nodeOnlyNames(file: ts.SourceFile, checker: ts.TypeChecker): string[] {
  const ours = (d: ts.Declaration) => {
    const name = d.getSourceFile().fileName;
    return name.includes('/node_modules/typescript/lib/') || (name.startsWith(`${kRoot}src/`) && !name.includes('/node_modules/'));
  };
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isIdentifier(node) && isFreeName(node)) || (ts.isStringLiteral(node) && isModuleName(node))) {
      let symbol = checker.getSymbolAtLocation(node);
      if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const declarations = symbol?.declarations ?? [];
      if (declarations.length > 0 && !declarations.some(ours)) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${file.fileName.slice(kBrowser.length)}:${line + 1} ${node.getText()}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

t.test('no browser module names a global, module or import that only Node declares', async (t) => {
  const files = readdirSync(kBrowser)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => kBrowser + name);
  t.ok(files.length > 20, 'the browser modules are found');
  const program = ts.createProgram(files, rootOptions());
  const checker = program.getTypeChecker();
  t.ok(
    program.getSourceFiles().some((f) => f.fileName.includes('/@types/node/')),
    "Node's types are in the program (through views.ts), so this test, not the tsconfig, is what keeps them out",
  );
  const found = files.flatMap((name) => nodeOnlyNames(program.getSourceFile(name)!, checker));
  t.same(found, [], 'names only Node declares');
});
