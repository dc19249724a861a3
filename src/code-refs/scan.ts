// One file's flag references: its tree walked once for the calls its language's patterns name
// (call-patterns.ts) and every declaration and write of a name, each in its scope (scopes.ts); each call's
// key then read from the tree, never guessed. A key is a string literal at the call, a name that stands
// there for a literal (a constant), or for such a name (an alias); anything else, a parameter or a name
// declared twice or written again included, is reported unknown, with its place.
import { callPatterns, kKeyArgumentNames, mayReference, type CallPattern } from './call-patterns.js';
import { parserFor, type SyntaxNode, type Tree } from './grammars.js';
import type { CallShape, Language } from './languages.js';
import { type Scope, ScopeTracker } from './scopes.js';
import { kCodeRefLimits, type CodeReference } from './schemas.js';

/** A receiver named so is taken for a flag client (an Unleash call on it counts). */
const kClientName = /client|unleash|feature|flag|toggle|openfeature|provider/i;
/** A binding whose value is such a call makes a flag client. */
const kClientMaker = /getClient|Unleash|OpenFeature|Flagwire|initialize|FeatureClient/;
/** How many names a key or a client is followed through before it is unknown. */
const kMaxHops = 4;

/** A found call, with its tree node: cleanup rewrites around it. */
export interface FoundReference {
  readonly reference: CodeReference;
  readonly call: SyntaxNode;
  readonly pattern: CallPattern;
}

/** The references in one file's text; `file` is the path they name. */
export async function scanSource(language: Language, file: string, text: string): Promise<CodeReference[]> {
  if (!mayReference(language.name, text)) return [];
  const tree = await parseSource(language, text);
  try {
    return findReferences(language, file, text, tree).map((found) => found.reference);
  } finally {
    tree.delete();
  }
}

/** The tree of a file's text; its caller deletes it (it lives in WebAssembly's memory). */
export async function parseSource(language: Language, text: string): Promise<Tree> {
  return (await parserFor(language)).parse(text);
}

/** The references in a parsed file, with their call nodes. */
export function findReferences(language: Language, file: string, text: string, tree: Tree): FoundReference[] {
  const patterns = callPatterns(language.name);
  const calls: { node: SyntaxNode; scope: Scope }[] = [];
  const scopes = new ScopeTracker(language.scopes, tree.rootNode.type);
  const cursor = tree.walk();
  let depth = 0;
  try {
    for (;;) {
      const type = cursor.nodeType;
      scopes.enter(type, depth);
      if (language.callTypes.has(type)) calls.push({ node: cursor.currentNode, scope: scopes.current });
      if (language.declarationTypes.has(type)) {
        const node = cursor.currentNode;
        for (const declaration of language.declarations(node)) scopes.declare(declaration, node);
      }
      if (language.writeTypes.has(type)) {
        const node = cursor.currentNode;
        for (const name of language.written(node)) scopes.write(name, node);
      }
      if (cursor.gotoFirstChild()) {
        depth++;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return resolveCalls(language, file, text, calls, scopes, patterns);
        depth--;
      }
    }
  } finally {
    cursor.delete();
  }
}

function resolveCalls(
  language: Language,
  file: string,
  text: string,
  calls: readonly { node: SyntaxNode; scope: Scope }[],
  scopes: ScopeTracker,
  patterns: ReadonlyMap<string, CallPattern>,
): FoundReference[] {
  const found: FoundReference[] = [];
  let lines: string[] | undefined;
  for (const { node, scope } of calls) {
    const shape = language.call(node);
    if (shape === null) continue;
    const pattern = patterns.get(shape.method);
    if (pattern === undefined) continue;
    if (pattern.needsClient && !isFlagClient(language, shape.receiver, scopes, scope, 0)) continue;
    const argument = keyArgument(shape, pattern.sdk === 'openfeature' ? language.openFeatureKeyAt : 0);
    if (argument === undefined) continue;
    const { kind, key } = resolveKey(language, argument, scopes, scope);
    lines ??= text.split('\n');
    const line = argument.startPosition.row + 1;
    const first = Math.max(1, line - 2);
    found.push({
      call: node,
      pattern,
      reference: {
        file,
        line,
        column: argument.startPosition.column + 1,
        language: language.name,
        sdk: pattern.sdk,
        method: shape.method,
        kind,
        key,
        expression: bounded(argument.text),
        context: lines.slice(first - 1, line + 2).map((l) => bounded(l.replace(/\r$/, ''))),
        contextStart: first,
      },
    });
  }
  return found;
}

function bounded(text: string): string {
  return text.length <= kCodeRefLimits.lineLength ? text : `${text.slice(0, kCodeRefLimits.lineLength - 1)}…`;
}

/** The argument holding the key: one named so, else the one at `at`. */
function keyArgument(shape: CallShape, at: number): SyntaxNode | undefined {
  const named = shape.args.find((arg) => arg.name !== null && kKeyArgumentNames.has(arg.name));
  if (named !== undefined) return named.value;
  return shape.args.filter((arg) => arg.name === null)[at]?.value;
}

/** The value a name stands for where it is used, with the scope that value is read in; undefined: none for certain. */
function standsFor(
  language: Language,
  node: SyntaxNode,
  scopes: ScopeTracker,
  scope: Scope,
): { value: SyntaxNode; from: Scope } | undefined {
  const name = language.boundName(node);
  if (name === null) return undefined;
  const bound = scopes.resolve(name, name !== node.text, scope);
  return bound === undefined || bound.value === null ? undefined : { value: bound.value, from: bound.from };
}

function resolveKey(
  language: Language,
  argument: SyntaxNode,
  scopes: ScopeTracker,
  scope: Scope,
): { kind: CodeReference['kind']; key: string | null } {
  const literal = language.literal(argument);
  if (literal !== null) return literal === '' ? { kind: 'unknown', key: null } : { kind: 'literal', key: literal };
  let at = { value: argument, from: scope };
  for (let hop = 0; hop < kMaxHops; hop++) {
    const next = standsFor(language, at.value, scopes, at.from);
    if (next === undefined) break;
    const bound = language.literal(next.value);
    if (bound !== null && bound !== '') return { kind: hop === 0 ? 'constant' : 'alias', key: bound };
    at = next;
  }
  return { kind: 'unknown', key: null };
}

/** Whether a receiver is a flag client: named so, made by a client's maker, or a name bound to one. */
function isFlagClient(language: Language, receiver: SyntaxNode | null, scopes: ScopeTracker, scope: Scope, hop: number): boolean {
  if (receiver === null || hop > kMaxHops) return false;
  const name = language.boundName(receiver);
  if (name === null) return kClientMaker.test(receiver.text) && receiver.text.length <= kCodeRefLimits.lineLength;
  if (kClientName.test(name)) return true;
  const next = standsFor(language, receiver, scopes, scope);
  return next !== undefined && isFlagClient(language, next.value, scopes, next.from, hop + 1);
}
