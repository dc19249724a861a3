// A flag's cleanup: its boolean call sites in TypeScript and JavaScript rewritten to the kept path, by
// the index ranges of the parse (an if/else on the call, a ternary, a const bound to the call whose every
// use is such a condition), then what the rewrite left unused removed (unused.ts); what it cannot
// rewrite, and every place in another language, listed for a person to change.
import { readFile, writeFile } from 'node:fs/promises';
import { applyEdits, type Edit, removal } from './edits.js';
import type { SyntaxNode } from './grammars.js';
import { findReferences, parseSource } from './scan.js';
import { sourceFiles } from './scan-tree.js';
import { mayReference } from './call-patterns.js';
import { flagExports, importedFlagNames, unusedFlagExports } from './flag-exports.js';
import { kRewrittenLanguages } from './languages.js';
import { namesIn, removeUnused } from './unused.js';

export type Kept = 'on' | 'off';

export interface CleanupPlace {
  readonly file: string;
  readonly line: number;
  readonly language: string;
  readonly what: string;
}

export interface CleanupResult {
  readonly flag: string;
  readonly keep: Kept;
  readonly filesChanged: readonly string[];
  readonly rewritten: readonly CleanupPlace[];
  /** The places left for a person: each with why. */
  readonly left: readonly CleanupPlace[];
  /** Declarations and imports the rewrite left unused, removed. */
  readonly removed: readonly CleanupPlace[];
  /** Exported names the rewrite left unused in their file: kept, for a person to remove if nothing imports them. */
  readonly unusedExports: readonly CleanupPlace[];
}

/** Expressions that stand where a ternary stood without parentheses. */
const kPrimary = new Set([
  'identifier',
  'string',
  'number',
  'true',
  'false',
  'null',
  'undefined',
  'template_string',
  'call_expression',
  'member_expression',
  'parenthesized_expression',
  'array',
  'object',
]);

export async function cleanup(root: string, flag: string, keep: Kept): Promise<CleanupResult> {
  const { files } = await sourceFiles(root);
  const rewritten: CleanupPlace[] = [];
  const left: CleanupPlace[] = [];
  const removed: CleanupPlace[] = [];
  const unusedExports: CleanupPlace[] = [];
  const filesChanged: string[] = [];
  const exported = await flagExports(files, flag);
  for (const { path, file, language } of files) {
    const text = await readFile(path, 'utf8');
    if (!mayReference(language.name, text)) continue;
    const tree = await parseSource(language, text);
    try {
      const imported = kRewrittenLanguages.has(language.name) ? importedFlagNames(tree.rootNode, path, exported) : new Set<string>();
      const found = findReferences(language, file, text, tree).filter(
        (f) => f.reference.key === flag || (f.reference.kind === 'unknown' && imported.has(f.reference.expression)),
      );
      const edits: Edit[] = [];
      const done: CleanupPlace[] = [];
      /** The names the rewritten calls read: what may be left unused. */
      const read = new Set<string>();
      for (const { reference, call, pattern } of found) {
        const place = (what: string): CleanupPlace => ({ file, line: reference.line, language: reference.language, what });
        if (!kRewrittenLanguages.has(language.name))
          left.push(place(`${reference.method}: rewrite by hand (only TypeScript and JavaScript are rewritten)`));
        else if (!pattern.boolean) left.push(place(`${reference.method}: not a boolean evaluation`));
        else {
          const made = rewriteSite(text, call, keep === 'on');
          if (typeof made === 'string') left.push(place(made));
          else {
            edits.push(...made.edits);
            done.push(place(made.what));
            for (const name of namesIn(call)) read.add(name);
          }
        }
      }
      const applied = applyEdits(text, edits);
      if (applied === null) {
        // Edits that overlap (a flag's condition inside another of its own): nothing of the file is changed.
        for (const r of done) left.push({ ...r, what: `${r.what}: overlaps another rewrite of the flag; run again` });
      } else if (applied !== text) {
        const unused = await removeUnused(language, applied, read);
        const at = (u: { line: number; what: string }): CleanupPlace => ({ file, line: u.line, language: language.name, what: u.what });
        removed.push(...unused.removed.map(at));
        unusedExports.push(...unused.exported.map(at));
        await writeFile(path, unused.text);
        filesChanged.push(file);
        rewritten.push(...done);
      }
    } finally {
      tree.delete();
    }
  }
  for (const u of await unusedFlagExports(files, exported))
    if (!unusedExports.some((p) => p.file === u.file && p.what.startsWith(`const ${u.name}:`)))
      unusedExports.push({ file: u.file, line: u.line, language: u.language.name, what: `const ${u.name}: exported, no file uses it` });
  return { flag, keep, filesChanged, rewritten, left, removed, unusedExports };
}

/** The rewrite of one call site, or why there is none. */
function rewriteSite(text: string, call: SyntaxNode, value: boolean): { edits: Edit[]; what: string } | string {
  const condition = asCondition(text, call, value);
  if (typeof condition !== 'string') return condition;
  const expression = call.parent?.type === 'await_expression' ? call.parent : call;
  const declarator = expression.parent;
  if (declarator?.type !== 'variable_declarator' || declarator.childForFieldName('value')?.id !== expression.id) return condition;
  return rewriteBinding(text, declarator, value);
}

/** The rewrite of a condition on the call (or a name bound to it): an if's or a ternary's; or why not. */
function asCondition(text: string, node: SyntaxNode, value: boolean): { edits: Edit[]; what: string } | string {
  let e = node.parent?.type === 'await_expression' ? node.parent : node;
  let kept = value;
  let parent = e.parent;
  while (
    parent !== null &&
    (parent.type === 'parenthesized_expression' || (parent.type === 'unary_expression' && parent.child(0)?.text === '!'))
  ) {
    if (parent.type === 'unary_expression') kept = !kept;
    e = parent;
    parent = parent.parent;
  }
  if (parent === null) return 'not a condition';
  if (parent.type === 'if_statement' && parent.childForFieldName('condition')?.id === e.id)
    return { edits: [keepIfBranch(text, parent, kept)], what: 'if statement' };
  if (parent.type === 'ternary_expression' && parent.childForFieldName('condition')?.id === e.id) {
    const branch = parent.childForFieldName(kept ? 'consequence' : 'alternative');
    if (branch === null) return 'ternary without a branch';
    const replacement = kPrimary.has(branch.type) ? branch.text : `(${branch.text})`;
    return { edits: [{ start: parent.startIndex, end: parent.endIndex, text: replacement }], what: 'ternary' };
  }
  return `used as ${parent.type.replace(/_/g, ' ')}: rewrite by hand`;
}

/** A const bound to the call, each of whose uses is a condition: every use rewritten, the binding removed. */
function rewriteBinding(text: string, declarator: SyntaxNode, value: boolean): { edits: Edit[]; what: string } | string {
  const name = declarator.childForFieldName('name');
  const declaration = declarator.parent;
  const scope = declaration?.parent;
  if (name?.type !== 'identifier' || declaration?.type !== 'lexical_declaration' || declaration.namedChildCount !== 1 || !scope)
    return 'bound in a declaration that is not a single const: rewrite by hand';
  if (declaration.child(0)?.text !== 'const') return `${name.text} is not a const: rewrite by hand`;
  const edits: Edit[] = [removal(text, declaration)];
  for (const use of scope.descendantsOfType('identifier')) {
    if (use.text !== name.text || use.id === name.id) continue;
    const made = asCondition(text, use, value);
    if (typeof made === 'string') return `${name.text} ${made}`;
    edits.push(...made.edits);
  }
  return { edits, what: `const ${name.text} and its conditions` };
}

/** The if statement replaced by its kept branch's statements (nothing when that branch is absent). */
function keepIfBranch(text: string, ifNode: SyntaxNode, kept: boolean): Edit {
  let branch = ifNode.childForFieldName(kept ? 'consequence' : 'alternative');
  if (branch?.type === 'else_clause') branch = branch.namedChildren[0] ?? null;
  if (branch === null) return removal(text, ifNode);
  if (branch.type !== 'statement_block') return { start: ifNode.startIndex, end: ifNode.endIndex, text: branch.text };
  if (!unwrappable(ifNode, branch)) return { start: ifNode.startIndex, end: ifNode.endIndex, text: branch.text };
  const lines = text.slice(branch.startIndex + 1, branch.endIndex - 1).split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  if (lines.length === 0) return removal(text, ifNode);
  const lineStart = text.lastIndexOf('\n', ifNode.startIndex - 1) + 1;
  const indent = text.slice(lineStart, ifNode.startIndex).match(/^\s*/)![0];
  const inner = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => l.match(/^\s*/)![0].length));
  const body = lines.map((l, i) => (l.trim() === '' ? '' : `${i === 0 ? '' : indent}${l.slice(inner)}`)).join('\n');
  return { start: ifNode.startIndex, end: ifNode.endIndex, text: body };
}

/**
 * Whether a kept block's statements may stand without its braces: no other statement of the block the if
 * stands in names what it declares (a const moved into that block is seen, or shadows, from all of it).
 */
function unwrappable(ifNode: SyntaxNode, block: SyntaxNode): boolean {
  const declared = new Set(
    block.namedChildren.filter((n) => /declaration$/.test(n.type)).flatMap((n) => n.descendantsOfType('identifier').map((id) => id.text)),
  );
  if (declared.size === 0) return true;
  const siblings = (ifNode.parent?.namedChildren ?? []).filter((sibling) => sibling.id !== ifNode.id);
  return !siblings.some((sibling) => sibling.descendantsOfType('identifier').some((id) => declared.has(id.text)));
}
