// A flag's key held by an exported constant of a TypeScript or JavaScript file (`export const
// NEW_CHECKOUT = 'new-checkout'`) and imported by others: a scan reads one file at a time and reports such
// a key unknown; a cleanup, which reads the whole project, knows it, rewrites the calls on it, and lists
// the constant when no file names it any more.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SyntaxNode } from './grammars.js';
import { kRewrittenLanguages, type Language } from './languages.js';
import { parseSource } from './scan.js';
import type { SourceFile } from './scan-tree.js';

/** A file's exported constants holding the flag's key: path on disk → name → its line. */
export type FlagExports = ReadonlyMap<string, ReadonlyMap<string, number>>;

export async function flagExports(files: readonly SourceFile[], flag: string): Promise<FlagExports> {
  const found = new Map<string, Map<string, number>>();
  for (const { path, language } of files) {
    if (!kRewrittenLanguages.has(language.name)) continue;
    const text = await readFile(path, 'utf8');
    if (!text.includes(flag)) continue;
    const tree = await parseSource(language, text);
    try {
      for (const statement of tree.rootNode.namedChildren) {
        const declaration = statement.type === 'export_statement' ? statement.childForFieldName('declaration') : null;
        if (declaration?.type !== 'lexical_declaration' || declaration.child(0)?.text !== 'const') continue;
        for (const declarator of declaration.namedChildren) {
          const name = declarator.childForFieldName('name');
          const value = declarator.childForFieldName('value');
          if (name?.type !== 'identifier' || value === null || language.literal(value) !== flag) continue;
          const names = found.get(path) ?? new Map<string, number>();
          names.set(name.text, declarator.startPosition.row + 1);
          found.set(path, names);
        }
      }
    } finally {
      tree.delete();
    }
  }
  return found;
}

/** The files a relative import's source may name: as written, or a TypeScript file compiled to it. */
function modulePaths(from: string, source: string): string[] {
  if (!source.startsWith('.')) return [];
  const path = join(dirname(from), source);
  const bare = path.replace(/\.(m|c)?js$/, '');
  return [path, `${bare}.ts`, `${bare}.tsx`, `${bare}.mts`, `${bare}.cts`, `${bare}.js`, `${bare}.mjs`];
}

/** The names a file imports (by their local names) that stand for the flag's key. */
export function importedFlagNames(root: SyntaxNode, path: string, exports: FlagExports): Set<string> {
  const names = new Set<string>();
  if (exports.size === 0) return names;
  for (const statement of root.namedChildren) {
    if (statement.type !== 'import_statement') continue;
    const source = statement.childForFieldName('source');
    const fragment = source?.namedChildren[0]?.text;
    if (fragment === undefined) continue;
    const exported = modulePaths(path, fragment)
      .map((p) => exports.get(p))
      .find((m) => m !== undefined);
    if (exported === undefined) continue;
    for (const specifier of statement.descendantsOfType('import_specifier')) {
      const name = specifier.childForFieldName('name')?.text;
      const local = specifier.childForFieldName('alias') ?? specifier.childForFieldName('name');
      if (name !== undefined && local !== null && exported.has(name)) names.add(local.text);
    }
  }
  return names;
}

/** The exported constants of the flag's key that no file of the project names any more but their own declaration. */
export async function unusedFlagExports(
  files: readonly SourceFile[],
  exports: FlagExports,
): Promise<{ file: string; language: Language; line: number; name: string }[]> {
  const unused: { file: string; language: Language; line: number; name: string }[] = [];
  if (exports.size === 0) return unused;
  const texts = new Map<string, string>();
  for (const { path, language } of files) if (kRewrittenLanguages.has(language.name)) texts.set(path, await readFile(path, 'utf8'));
  for (const { path, file, language } of files)
    for (const [name, line] of exports.get(path) ?? []) {
      const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g');
      let uses = 0;
      for (const text of texts.values()) uses += text.match(word)?.length ?? 0;
      if (uses === 1) unused.push({ file, language, line, name });
    }
  return unused;
}
