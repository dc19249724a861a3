// The shapes of tree-sitter grammars the languages share (languages-*.ts): a literal's content, a call's
// callee and arguments, a declaration's names (a pattern's, a field's), a name's last part.
import type { SyntaxNode } from './grammars.js';
import type { CallArgument, CallShape } from './languages.js';
import type { Declaration } from './scopes.js';

const kEscapes: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '0': '\0' };

/** The text of a literal's content parts, its escapes decoded when they are simple; null when it interpolates. */
export function contentOf(node: SyntaxNode, contentTypes: ReadonlySet<string>): string | null {
  let value = '';
  for (const part of node.namedChildren) {
    if (contentTypes.has(part.type)) value += part.text;
    else if (part.type === 'escape_sequence') value += kEscapes[part.text.slice(1)] ?? part.text.slice(1);
    else if (part.type !== 'string_start' && part.type !== 'string_end' && part.type !== 'comment') return null;
  }
  return value;
}

/** A quoted literal's inside, for grammars that give it no parts (Go's, C#'s). */
export function unquoted(text: string, prefix: string): string | null {
  if (!text.startsWith(`${prefix}"`) || !text.endsWith('"') || text.length < prefix.length + 2) return null;
  const inner = text.slice(prefix.length + 1, -1);
  return prefix === '' && inner.includes('\\') ? inner.replace(/\\(.)/g, (_m, c: string) => kEscapes[c] ?? c) : inner;
}

/** The last name of a dotted access (`a.b.C`, `A::B`), when the text is only names. */
function lastName(text: string): string | null {
  if (!/^[A-Za-z_$][\w$]*(?:(?:\.|::|\?\.)[A-Za-z_$][\w$]*)+$/.test(text)) return null;
  return text.slice(Math.max(text.lastIndexOf('.'), text.lastIndexOf(':')) + 1);
}

export function plainArgs(list: SyntaxNode | null): CallArgument[] {
  if (list === null) return [];
  return list.namedChildren.filter((n) => n.type !== 'comment').map((value) => ({ name: null, value }));
}

/** A call of `receiver.method(...)` (a `memberType` node with those fields) or of a bare name. */
export function calleeShape(
  fn: SyntaxNode | null,
  memberType: string,
  receiverField: string,
  methodField: string,
  args: CallArgument[],
): CallShape | null {
  if (fn === null) return null;
  if (fn.type === memberType) {
    const method = fn.childForFieldName(methodField);
    return method === null ? null : { method: method.text, receiver: fn.childForFieldName(receiverField), args };
  }
  return fn.type === 'identifier' ? { method: fn.text, receiver: null, args } : null;
}

export const kIdentifier: ReadonlySet<string> = new Set(['identifier']);

/**
 * The declaration of a node whose `targetField` is a plain name (of `nameTypes`) and `valueField` its value
 * (none: declared without one); a pattern there declares its names without values.
 */
export function fieldBinding(
  node: SyntaxNode,
  targetField: string,
  valueField: string,
  nameTypes = kIdentifier,
  skip: Skip = kNoSkip,
): Declaration[] {
  const target = node.childForFieldName(targetField);
  if (target === null) return [];
  if (nameTypes.has(target.type)) return [{ name: target.text, value: node.childForFieldName(valueField) }];
  return isPattern(target, nameTypes) ? unvalued(patternNames(target, nameTypes, skip)) : [];
}

/** Whether a target is a name or a destructuring of names, not a member or an element (`a.b = x`). */
export function isPattern(target: SyntaxNode, nameTypes: ReadonlySet<string>): boolean {
  return nameTypes.has(target.type) || /pattern|list|tuple|destructured/.test(target.type);
}

/** Fields of a pattern that hold no declared name (a default value, a type), by the pattern's node type ('*': any). */
export type Skip = ReadonlyMap<string, readonly string[]>;
const kNoSkip: Skip = new Map();

/** The names a pattern (a parameter list, a destructuring) declares: its nodes of `nameTypes`, outside skipped fields. */
export function patternNames(node: SyntaxNode, nameTypes: ReadonlySet<string>, skip: Skip): string[] {
  if (nameTypes.has(node.type)) return [node.text];
  const skipped = new Set<number>();
  for (const field of [...(skip.get(node.type) ?? []), ...(skip.get('*') ?? [])])
    for (const child of node.childrenForFieldName(field)) skipped.add(child.id);
  return node.namedChildren.filter((child) => !skipped.has(child.id)).flatMap((child) => patternNames(child, nameTypes, skip));
}

export function unvalued(names: readonly string[], place?: Declaration['place']): Declaration[] {
  return names.map((name) => (place === undefined ? { name, value: null } : { name, value: null, place }));
}

/** The names of `field` children of `node`, when they are of `nameTypes`. */
export function fieldNames(node: SyntaxNode, field: string, nameTypes = kIdentifier): string[] {
  return node.childrenForFieldName(field).flatMap((child) => (nameTypes.has(child.type) ? [child.text] : []));
}

export function nameOf(node: SyntaxNode, identifierTypes: ReadonlySet<string>, memberTypes: ReadonlySet<string>): string | null {
  if (identifierTypes.has(node.type)) return node.text;
  if (memberTypes.has(node.type)) return lastName(node.text);
  return null;
}
