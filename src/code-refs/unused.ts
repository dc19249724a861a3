// What a cleanup's rewrite left unused in a TypeScript or JavaScript file: of the names the removed calls
// read (the key's constant, the client, their imports), each declared once in the file and named nowhere
// else in it after the rewrite is removed (a const or let, an import specifier, an import left empty), and
// the names its value read are looked at in turn (an alias's constant, the import of a client's maker).
// An exported one is kept and listed: another file may import it.
import { applyEdits, type Edit, removal } from './edits.js';
import type { SyntaxNode } from './grammars.js';
import type { Language } from './languages.js';
import { parseSource } from './scan.js';

export interface UnusedName {
  /** Its line in the file as the rewrite left it. */
  readonly line: number;
  readonly what: string;
}

export interface UnusedResult {
  readonly text: string;
  readonly removed: readonly UnusedName[];
  /** Exported names no longer used in the file: kept, for a person to remove. */
  readonly exported: readonly UnusedName[];
}

/** Node types that name a declared or used name (a shorthand `{ name }` uses it, `{ name } =` declares it). */
const kNameTypes: ReadonlySet<string> = new Set(['identifier', 'shorthand_property_identifier', 'shorthand_property_identifier_pattern']);

/** The names a node reads: its plain names, any depth. */
export function namesIn(node: SyntaxNode): string[] {
  return node.descendantsOfType([...kNameTypes]).map((n) => n.text);
}

/** A declaration of a name: its name node and the statement or list entry it stands in. */
interface Declared {
  readonly name: SyntaxNode;
  /** The const, let or var, or the import. */
  readonly statement: SyntaxNode;
  readonly what: string;
}

/** Each pass removes what the previous one left unused; a chain longer than this is left as it is. */
const kMaxPasses = 4;

export async function removeUnused(language: Language, text: string, candidates: ReadonlySet<string>): Promise<UnusedResult> {
  const removed: UnusedName[] = [];
  const exported: UnusedName[] = [];
  const listed = new Set<string>();
  let looking = new Set(candidates);
  for (let pass = 0; pass < kMaxPasses && looking.size > 0; pass++) {
    const tree = await parseSource(language, text);
    const next = new Set<string>();
    const edits: Edit[] = [];
    const taken: { edit: Edit; name: string; removal: UnusedName; reads: string[] }[] = [];
    try {
      const named = new Map<string, SyntaxNode[]>();
      for (const node of tree.rootNode.descendantsOfType([...kNameTypes])) {
        if (!looking.has(node.text)) continue;
        const list = named.get(node.text);
        if (list === undefined) named.set(node.text, [node]);
        else list.push(node);
      }
      for (const [name, nodes] of named) {
        const declarations = nodes.map(declaredBy).filter((d): d is Declared => d !== null);
        if (declarations.length !== 1 || nodes.length !== 1) continue;
        const declared = declarations[0]!;
        const line = declared.statement.startPosition.row + 1;
        if (declared.statement.parent?.type === 'export_statement') {
          if (!listed.has(name)) exported.push({ line, what: `${declared.what}: exported, no use left in this file` });
          listed.add(name);
          continue;
        }
        const value = declared.name.parent?.type === 'variable_declarator' ? declared.name.parent.childForFieldName('value') : null;
        const reads = value === null ? [] : namesIn(value);
        taken.push({ edit: removalOf(text, declared), name, removal: { line, what: declared.what }, reads });
      }
    } finally {
      tree.delete();
    }
    // Two removals that touch (two entries of one list): the later waits for the next pass, on the new text.
    for (const one of taken.sort((a, b) => a.edit.start - b.edit.start)) {
      if (edits.length > 0 && one.edit.start < edits.at(-1)!.end) {
        next.add(one.name);
        continue;
      }
      edits.push(one.edit);
      removed.push(one.removal);
      for (const read of one.reads) next.add(read);
    }
    text = applyEdits(text, edits) ?? text;
    looking = next;
  }
  return { text, removed, exported };
}

/** The declaration a name node is the name of, when it is a const, let or var's or an import's; null otherwise. */
function declaredBy(node: SyntaxNode): Declared | null {
  const parent = node.parent;
  if (parent === null) return null;
  if (parent.type === 'variable_declarator' && parent.childForFieldName('name')?.id === node.id) {
    const statement = parent.parent;
    if (statement === null || !/^(lexical|variable)_declaration$/.test(statement.type)) return null;
    return { name: node, statement, what: `${statement.child(0)?.text ?? 'const'} ${node.text}` };
  }
  if (node.type === 'shorthand_property_identifier_pattern' && parent.type === 'object_pattern') {
    const statement = parent.parent?.parent;
    if (parent.parent?.type !== 'variable_declarator' || statement === null || statement === undefined) return null;
    return { name: node, statement, what: `${statement.child(0)?.text ?? 'const'} { ${node.text} }` };
  }
  let importStatement: SyntaxNode | null = parent;
  for (let up = 0; up < 3 && importStatement !== null && importStatement.type !== 'import_statement'; up++)
    importStatement = importStatement.parent;
  if (importStatement?.type !== 'import_statement') return null;
  if (parent.type === 'import_specifier' && (parent.childForFieldName('alias') ?? parent.childForFieldName('name'))?.id === node.id)
    return { name: node, statement: importStatement, what: `import ${node.text}` };
  if (parent.type === 'import_clause' || parent.type === 'namespace_import')
    return { name: node, statement: importStatement, what: `import ${node.text}` };
  return null;
}

/** The edit that removes a declaration: its entry of a list, or its statement when it is the only one. */
function removalOf(text: string, declared: Declared): Edit {
  let entry = declared.name;
  if (entry.parent?.type === 'import_specifier') entry = entry.parent;
  if (entry.parent?.type === 'namespace_import') entry = entry.parent;
  if (entry.parent?.type === 'variable_declarator') entry = entry.parent;
  // An import's default name and its braces are the clause's entries; a specifier is its braces' entry.
  const list = entry.parent;
  if (list === null) return removal(text, declared.statement);
  const entries = list.namedChildren;
  if (entries.length > 1) {
    const at = entries.findIndex((n) => n.id === entry.id);
    const after = entries[at + 1];
    if (after !== undefined) return { start: entry.startIndex, end: after.startIndex, text: '' };
    return { start: entries[at - 1]!.endIndex, end: entry.endIndex, text: '' };
  }
  if (list.type === 'named_imports') {
    const clause = list.parent;
    if (clause !== null && clause.namedChildren.length > 1) {
      const before = clause.namedChildren[clause.namedChildren.findIndex((n) => n.id === list.id) - 1];
      if (before !== undefined) return { start: before.endIndex, end: list.endIndex, text: '' };
    }
  }
  if (list.type === 'object_pattern' && list.parent?.parent?.namedChildren.length !== 1) {
    const declarator = list.parent!;
    return removalOf(text, { ...declared, name: declarator.childForFieldName('name')! });
  }
  return removal(text, declared.statement);
}
