// The languages a scan reads, each as the few shapes of its tree-sitter grammar a scan needs: a call (its
// method, receiver and arguments), its scopes, a declaration (a name given a value, or a parameter, a loop
// variable, an import: a name given none), a write of a name, a string literal and a name. The grammars
// are tree-sitter-wasms' (docs/code-refs.md); each language's shapes are in languages-script.ts and
// languages-compiled.ts.
import type { SyntaxNode } from './grammars.js';
import { kCsharp, kGo, kJava, kKotlin } from './languages-compiled.js';
import { javascriptLike, kPython, kRuby } from './languages-script.js';
import type { Declaration, ScopeRules } from './scopes.js';

export type LanguageName = 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'java' | 'csharp' | 'kotlin' | 'ruby';

/** An argument of a call: its name where the language names arguments (flag_key: ...), and its value. */
export interface CallArgument {
  readonly name: string | null;
  readonly value: SyntaxNode;
}

export interface CallShape {
  readonly method: string;
  /** What the method is called on; null: a bare call. */
  readonly receiver: SyntaxNode | null;
  readonly args: readonly CallArgument[];
}

export interface Language {
  readonly name: LanguageName;
  /** The grammar's file in tree-sitter-wasms (out/tree-sitter-<grammar>.wasm). */
  readonly grammar: string;
  /** The node types a call is, and its shape; null when a node of those types is not a plain call. */
  readonly callTypes: ReadonlySet<string>;
  call(node: SyntaxNode): CallShape | null;
  readonly scopes: ScopeRules;
  /** The node types that declare names, and the names each declares (several: Go's `a, b := x, y`). */
  readonly declarationTypes: ReadonlySet<string>;
  declarations(node: SyntaxNode): readonly Declaration[];
  /** The node types that give a declared name another value (`k = user.key`), and the names each writes. */
  readonly writeTypes: ReadonlySet<string>;
  written(node: SyntaxNode): readonly string[];
  /** The string's value when the node is a string literal without interpolation; null otherwise. */
  literal(node: SyntaxNode): string | null;
  /** The name a node stands for when it is a plain name, or a member access by names (`Flags.CHECKOUT`: CHECKOUT). */
  boundName(node: SyntaxNode): string | null;
  /** Where OpenFeature's methods take the flag key when it is not named: Go's take a context first. */
  readonly openFeatureKeyAt: number;
}

const kTypescript = javascriptLike('typescript');
const kTsx = javascriptLike('tsx');
const kJavascript = javascriptLike('javascript');

/** The languages whose call sites a cleanup rewrites (cleanup.ts). */
export const kRewrittenLanguages: ReadonlySet<LanguageName> = new Set(['typescript', 'tsx', 'javascript']);

/** Each file name ending a scan reads, and the language it is read as. */
const kByExtension: ReadonlyMap<string, Language> = new Map([
  ['.ts', kTypescript],
  ['.mts', kTypescript],
  ['.cts', kTypescript],
  ['.tsx', kTsx],
  ['.js', kJavascript],
  ['.mjs', kJavascript],
  ['.cjs', kJavascript],
  ['.jsx', kJavascript],
  ['.py', kPython],
  ['.go', kGo],
  ['.java', kJava],
  ['.cs', kCsharp],
  ['.kt', kKotlin],
  ['.kts', kKotlin],
  ['.rb', kRuby],
]);

/** The language a file is read as, by its name; undefined: not one a scan reads. */
export function languageOf(fileName: string): Language | undefined {
  if (fileName.endsWith('.d.ts') || fileName.endsWith('.min.js')) return undefined;
  const dot = fileName.lastIndexOf('.');
  return dot < 0 ? undefined : kByExtension.get(fileName.slice(dot));
}
