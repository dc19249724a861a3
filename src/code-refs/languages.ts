// The languages a scan reads, each as the few shapes of its tree-sitter grammar a scan needs: a call (its
// method, receiver and arguments), a binding (a name given a value), a string literal and a name. The
// grammars are tree-sitter-wasms' (docs/code-refs.md); a node type named here is that grammar's.
import type { SyntaxNode } from './grammars.js';

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

export interface BindingShape {
  readonly name: string;
  readonly value: SyntaxNode;
}

export interface Language {
  readonly name: LanguageName;
  /** The grammar's file in tree-sitter-wasms (out/tree-sitter-<grammar>.wasm). */
  readonly grammar: string;
  /** The node types a call is, and its shape; null when a node of those types is not a plain call. */
  readonly callTypes: ReadonlySet<string>;
  call(node: SyntaxNode): CallShape | null;
  /** The node types a binding is, and the names each binds (several: Go's `a, b := x, y`). */
  readonly bindingTypes: ReadonlySet<string>;
  bindings(node: SyntaxNode): readonly BindingShape[];
  /** The string's value when the node is a string literal without interpolation; null otherwise. */
  literal(node: SyntaxNode): string | null;
  /** The name a node stands for when it is a plain name, or a member access by names (`Flags.CHECKOUT`: CHECKOUT). */
  boundName(node: SyntaxNode): string | null;
  /** Where OpenFeature's methods take the flag key when it is not named: Go's take a context first. */
  readonly openFeatureKeyAt: number;
}

const kEscapes: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '0': '\0' };

/** The text of a literal's content parts, its escapes decoded when they are simple; null when it interpolates. */
function contentOf(node: SyntaxNode, contentTypes: ReadonlySet<string>): string | null {
  let value = '';
  for (const part of node.namedChildren) {
    if (contentTypes.has(part.type)) value += part.text;
    else if (part.type === 'escape_sequence') value += kEscapes[part.text.slice(1)] ?? part.text.slice(1);
    else if (part.type !== 'string_start' && part.type !== 'string_end' && part.type !== 'comment') return null;
  }
  return value;
}

/** A quoted literal's inside, for grammars that give it no parts (Go's, C#'s). */
function unquoted(text: string, prefix: string): string | null {
  if (!text.startsWith(`${prefix}"`) || !text.endsWith('"') || text.length < prefix.length + 2) return null;
  const inner = text.slice(prefix.length + 1, -1);
  return prefix === '' && inner.includes('\\') ? inner.replace(/\\(.)/g, (_m, c: string) => kEscapes[c] ?? c) : inner;
}

/** The last name of a dotted access (`a.b.C`, `A::B`), when the text is only names. */
function lastName(text: string): string | null {
  if (!/^[A-Za-z_$][\w$]*(?:(?:\.|::|\?\.)[A-Za-z_$][\w$]*)+$/.test(text)) return null;
  return text.slice(Math.max(text.lastIndexOf('.'), text.lastIndexOf(':')) + 1);
}

function plainArgs(list: SyntaxNode | null): CallArgument[] {
  if (list === null) return [];
  return list.namedChildren.filter((n) => n.type !== 'comment').map((value) => ({ name: null, value }));
}

/** A call of `receiver.method(...)` (a `memberType` node with those fields) or of a bare name. */
function calleeShape(
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

const kIdentifier: ReadonlySet<string> = new Set(['identifier']);

/** The binding of a node whose `targetField` is a plain name (of `nameTypes`) and `valueField` its value. */
function fieldBinding(node: SyntaxNode, targetField: string, valueField: string, nameTypes = kIdentifier): BindingShape[] {
  const target = node.childForFieldName(targetField);
  const value = node.childForFieldName(valueField);
  return target !== null && nameTypes.has(target.type) && value !== null ? [{ name: target.text, value }] : [];
}

function nameOf(node: SyntaxNode, identifierTypes: ReadonlySet<string>, memberTypes: ReadonlySet<string>): string | null {
  if (identifierTypes.has(node.type)) return node.text;
  if (memberTypes.has(node.type)) return lastName(node.text);
  return null;
}

const kJsStrings = new Set(['string_fragment']);
const kJsIdentifiers = new Set(['identifier']);
const kJsMembers = new Set(['member_expression']);

function javascriptLike(name: 'typescript' | 'tsx' | 'javascript'): Language {
  return {
    name,
    grammar: name,
    callTypes: new Set(['call_expression']),
    call: (node) =>
      calleeShape(
        node.childForFieldName('function'),
        'member_expression',
        'object',
        'property',
        plainArgs(node.childForFieldName('arguments')),
      ),
    bindingTypes: new Set(['variable_declarator', 'assignment_expression']),
    bindings: (node) => (node.type === 'variable_declarator' ? fieldBinding(node, 'name', 'value') : fieldBinding(node, 'left', 'right')),
    literal(node) {
      if (node.type === 'string') return contentOf(node, kJsStrings);
      if (node.type === 'template_string') return contentOf(node, kJsStrings);
      return null;
    },
    boundName: (node) => nameOf(node, kJsIdentifiers, kJsMembers),
    openFeatureKeyAt: 0,
  };
}

const kPythonContent = new Set(['string_content']);
const kPython: Language = {
  name: 'python',
  grammar: 'python',
  callTypes: new Set(['call']),
  call(node) {
    const fn = node.childForFieldName('function');
    const args: CallArgument[] = [];
    for (const arg of node.childForFieldName('arguments')?.namedChildren ?? []) {
      if (arg.type === 'keyword_argument') {
        const value = arg.childForFieldName('value');
        if (value !== null) args.push({ name: arg.childForFieldName('name')?.text ?? null, value });
      } else if (arg.type !== 'comment') args.push({ name: null, value: arg });
    }
    return calleeShape(fn, 'attribute', 'object', 'attribute', args);
  },
  bindingTypes: new Set(['assignment']),
  bindings: (node) => fieldBinding(node, 'left', 'right'),
  literal(node) {
    if (node.type !== 'string') return null;
    // An f-string's parts are interpolations; a byte or raw prefix is still a plain literal.
    return contentOf(node, kPythonContent);
  },
  boundName: (node) => nameOf(node, new Set(['identifier']), new Set(['attribute'])),
  openFeatureKeyAt: 0,
};

const kGoIdentifiers = new Set(['identifier']);
const kGoMembers = new Set(['selector_expression']);
const kGo: Language = {
  name: 'go',
  grammar: 'go',
  callTypes: new Set(['call_expression']),
  call: (node) =>
    calleeShape(
      node.childForFieldName('function'),
      'selector_expression',
      'operand',
      'field',
      plainArgs(node.childForFieldName('arguments')),
    ),
  bindingTypes: new Set(['const_spec', 'var_spec', 'short_var_declaration', 'assignment_statement']),
  bindings(node) {
    const spec = node.type === 'const_spec' || node.type === 'var_spec';
    const names = spec ? node.childrenForFieldName('name') : (node.childForFieldName('left')?.namedChildren ?? []);
    const values = node.childForFieldName(spec ? 'value' : 'right')?.namedChildren ?? [];
    const out: BindingShape[] = [];
    names.forEach((target, i) => {
      const value = values[i];
      if (target.type === 'identifier' && value !== undefined) out.push({ name: target.text, value });
    });
    return out;
  },
  literal(node) {
    if (node.type === 'raw_string_literal') return node.text.slice(1, -1);
    return node.type === 'interpreted_string_literal' ? unquoted(node.text, '') : null;
  },
  boundName: (node) => nameOf(node, kGoIdentifiers, kGoMembers),
  openFeatureKeyAt: 1,
};

const kJavaContent = new Set(['string_fragment']);
const kJava: Language = {
  name: 'java',
  grammar: 'java',
  callTypes: new Set(['method_invocation']),
  call(node) {
    const name = node.childForFieldName('name');
    if (name === null) return null;
    return { method: name.text, receiver: node.childForFieldName('object'), args: plainArgs(node.childForFieldName('arguments')) };
  },
  bindingTypes: new Set(['variable_declarator', 'assignment_expression']),
  bindings: (node) => (node.type === 'variable_declarator' ? fieldBinding(node, 'name', 'value') : fieldBinding(node, 'left', 'right')),
  literal: (node) => (node.type === 'string_literal' && !node.text.startsWith('"""') ? contentOf(node, kJavaContent) : null),
  boundName: (node) => nameOf(node, new Set(['identifier']), new Set(['field_access'])),
  openFeatureKeyAt: 0,
};

const kCsharp: Language = {
  name: 'csharp',
  grammar: 'c_sharp',
  callTypes: new Set(['invocation_expression']),
  call(node) {
    const args: CallArgument[] = [];
    for (const arg of node.childForFieldName('arguments')?.namedChildren ?? []) {
      if (arg.type !== 'argument') continue;
      const label = arg.namedChildren.find((n) => n.type === 'name_colon');
      const value = arg.namedChildren.at(-1);
      if (value !== undefined) args.push({ name: label === undefined ? null : label.text.replace(/\s*:$/, ''), value });
    }
    return calleeShape(node.childForFieldName('function'), 'member_access_expression', 'expression', 'name', args);
  },
  bindingTypes: new Set(['variable_declarator', 'assignment_expression']),
  bindings(node) {
    if (node.type === 'assignment_expression') return fieldBinding(node, 'left', 'right');
    const target = node.namedChildren[0];
    const value = node.namedChildren.find((n) => n.type === 'equals_value_clause')?.namedChildren[0];
    return target?.type === 'identifier' && value !== undefined ? [{ name: target.text, value }] : [];
  },
  literal(node) {
    if (node.type === 'verbatim_string_literal') return unquoted(node.text, '@');
    if (node.type !== 'string_literal') return null;
    return node.namedChildCount === 0
      ? unquoted(node.text, '')
      : contentOf(node, new Set(['string_literal_fragment', 'string_literal_content']));
  },
  boundName: (node) => nameOf(node, new Set(['identifier']), new Set(['member_access_expression'])),
  openFeatureKeyAt: 0,
};

const kKotlinContent = new Set(['string_content']);
const kKotlin: Language = {
  name: 'kotlin',
  grammar: 'kotlin',
  callTypes: new Set(['call_expression']),
  call(node) {
    const [fn, suffix] = node.namedChildren;
    if (fn === undefined || suffix?.type !== 'call_suffix') return null;
    const args: CallArgument[] = [];
    for (const arg of suffix.namedChildren.find((n) => n.type === 'value_arguments')?.namedChildren ?? []) {
      if (arg.type !== 'value_argument') continue;
      const parts = arg.namedChildren;
      const named = parts.length === 2 && parts[0]!.type === 'simple_identifier' && /^\s*\w+\s*=/.test(arg.text);
      const value = parts.at(-1);
      if (value !== undefined) args.push({ name: named ? parts[0]!.text : null, value });
    }
    if (fn.type === 'navigation_expression') {
      const navigation = fn.namedChildren.at(-1);
      const method = navigation?.namedChildren.at(-1);
      if (navigation?.type !== 'navigation_suffix' || method?.type !== 'simple_identifier') return null;
      return { method: method.text, receiver: fn.namedChildren[0] ?? null, args };
    }
    return fn.type === 'simple_identifier' ? { method: fn.text, receiver: null, args } : null;
  },
  bindingTypes: new Set(['property_declaration', 'assignment']),
  bindings(node) {
    const parts = node.namedChildren;
    if (node.type === 'assignment') {
      const target = parts[0];
      const value = parts.at(-1);
      const name = target?.namedChildren[0];
      return name?.type === 'simple_identifier' && target!.namedChildCount === 1 && value !== undefined && value !== target
        ? [{ name: name.text, value }]
        : [];
    }
    const declaration = parts.find((n) => n.type === 'variable_declaration');
    const name = declaration?.namedChildren[0];
    const value = parts.at(-1);
    if (name?.type !== 'simple_identifier' || value === undefined || value === declaration) return [];
    return [{ name: name.text, value }];
  },
  literal: (node) => (node.type === 'string_literal' && !node.text.startsWith('"""') ? contentOf(node, kKotlinContent) : null),
  boundName: (node) => nameOf(node, new Set(['simple_identifier']), new Set(['navigation_expression'])),
  openFeatureKeyAt: 0,
};

const kRubyContent = new Set(['string_content']);
const kRubyNames: ReadonlySet<string> = new Set(['identifier', 'constant']);
const kRuby: Language = {
  name: 'ruby',
  grammar: 'ruby',
  callTypes: new Set(['call']),
  call(node) {
    const method = node.childForFieldName('method');
    if (method === null) return null;
    const args: CallArgument[] = [];
    for (const arg of node.childForFieldName('arguments')?.namedChildren ?? []) {
      if (arg.type === 'pair') {
        const key = arg.childForFieldName('key');
        const value = arg.childForFieldName('value');
        if (key !== null && value !== null) args.push({ name: key.text.replace(/^:|:$/g, ''), value });
      } else if (arg.type !== 'comment') args.push({ name: null, value: arg });
    }
    return { method: method.text, receiver: node.childForFieldName('receiver'), args };
  },
  bindingTypes: new Set(['assignment']),
  bindings: (node) => fieldBinding(node, 'left', 'right', kRubyNames),
  literal(node) {
    if (node.type === 'simple_symbol') return node.text.slice(1);
    return node.type === 'string' ? contentOf(node, kRubyContent) : null;
  },
  boundName: (node) => nameOf(node, kRubyNames, new Set(['scope_resolution'])),
  openFeatureKeyAt: 0,
};

const kTypescript = javascriptLike('typescript');
const kTsx = javascriptLike('tsx');
const kJavascript = javascriptLike('javascript');

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
