// The languages a scan reads, each as the few shapes of its tree-sitter grammar a scan needs: a call (its
// method, receiver and arguments), its scopes, a declaration (a name given a value, or a parameter, a loop
// variable, an import: a name given none), a write of a name, a string literal and a name. The grammars
// are tree-sitter-wasms' (docs/code-refs.md); a node type named here is that grammar's.
import type { SyntaxNode } from './grammars.js';
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

/**
 * The declaration of a node whose `targetField` is a plain name (of `nameTypes`) and `valueField` its value
 * (none: declared without one); a pattern there declares its names without values.
 */
function fieldBinding(
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
function isPattern(target: SyntaxNode, nameTypes: ReadonlySet<string>): boolean {
  return nameTypes.has(target.type) || /pattern|list|tuple|destructured/.test(target.type);
}

/** Fields of a pattern that hold no declared name (a default value, a type), by the pattern's node type ('*': any). */
type Skip = ReadonlyMap<string, readonly string[]>;
const kNoSkip: Skip = new Map();

/** The names a pattern (a parameter list, a destructuring) declares: its nodes of `nameTypes`, outside skipped fields. */
function patternNames(node: SyntaxNode, nameTypes: ReadonlySet<string>, skip: Skip): string[] {
  if (nameTypes.has(node.type)) return [node.text];
  const skipped = new Set<number>();
  for (const field of [...(skip.get(node.type) ?? []), ...(skip.get('*') ?? [])])
    for (const child of node.childrenForFieldName(field)) skipped.add(child.id);
  return node.namedChildren.filter((child) => !skipped.has(child.id)).flatMap((child) => patternNames(child, nameTypes, skip));
}

function unvalued(names: readonly string[], place?: Declaration['place']): Declaration[] {
  return names.map((name) => (place === undefined ? { name, value: null } : { name, value: null, place }));
}

/** The names of `field` children of `node`, when they are of `nameTypes`. */
function fieldNames(node: SyntaxNode, field: string, nameTypes = kIdentifier): string[] {
  return node.childrenForFieldName(field).flatMap((child) => (nameTypes.has(child.type) ? [child.text] : []));
}

function nameOf(node: SyntaxNode, identifierTypes: ReadonlySet<string>, memberTypes: ReadonlySet<string>): string | null {
  if (identifierTypes.has(node.type)) return node.text;
  if (memberTypes.has(node.type)) return lastName(node.text);
  return null;
}

const kJsStrings = new Set(['string_fragment']);
const kJsIdentifiers = new Set(['identifier']);
const kJsMembers = new Set(['member_expression']);
const kJsNames: ReadonlySet<string> = new Set(['identifier', 'shorthand_property_identifier_pattern']);
const kJsSkip: Skip = new Map([
  ['*', ['right', 'type', 'decorator']],
  ['required_parameter', ['value']],
  ['optional_parameter', ['value']],
]);
const kJsFunctions = [
  'program',
  'function_declaration',
  'generator_function_declaration',
  'function_expression',
  'function',
  'generator_function',
  'arrow_function',
  'method_definition',
  'class_static_block',
];
const kJsScopes: ScopeRules = {
  types: new Set([...kJsFunctions, 'statement_block', 'for_statement', 'for_in_statement', 'catch_clause', 'switch_body']),
  functions: new Set(kJsFunctions),
  members: new Set(['program']),
};

/** How a for-in or for-of declares its variable; null: it declares none, it writes one declared before. */
function forKind(node: SyntaxNode): string | null {
  return /^for\s*(?:await\s*)?\(\s*(const|let|var)\b/.exec(node.text)?.[1] ?? null;
}

function javascriptDeclarations(node: SyntaxNode): Declaration[] {
  switch (node.type) {
    case 'variable_declarator': {
      const place = node.parent?.type === 'variable_declaration' ? 'function' : undefined;
      return fieldBinding(node, 'name', 'value', kJsNames, kJsSkip).map((d) => (place === undefined ? d : { ...d, place }));
    }
    case 'formal_parameters':
      return unvalued(patternNames(node, kJsNames, kJsSkip));
    case 'arrow_function':
      return unvalued(fieldNames(node, 'parameter'));
    case 'catch_clause':
    case 'for_in_statement': {
      const target = node.childForFieldName(node.type === 'catch_clause' ? 'parameter' : 'left');
      const kind = node.type === 'for_in_statement' ? forKind(node) : 'let';
      if (target === null || kind === null) return [];
      return unvalued(patternNames(target, kJsNames, kJsSkip), kind === 'var' ? 'function' : undefined);
    }
    case 'function_declaration':
    case 'generator_function_declaration':
      return unvalued(fieldNames(node, 'name'), 'outer');
    case 'class_declaration':
      return unvalued(fieldNames(node, 'name'));
    case 'import_specifier':
      return unvalued([(node.childForFieldName('alias') ?? node.childForFieldName('name'))?.text ?? '']);
    default:
      // An import's default name (import_clause) or namespace (namespace_import).
      return unvalued(node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text));
  }
}

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
    scopes: kJsScopes,
    declarationTypes: new Set([
      'variable_declarator',
      'formal_parameters',
      'arrow_function',
      'catch_clause',
      'for_in_statement',
      'function_declaration',
      'generator_function_declaration',
      'class_declaration',
      'import_specifier',
      'import_clause',
      'namespace_import',
    ]),
    declarations: javascriptDeclarations,
    writeTypes: new Set(['assignment_expression', 'augmented_assignment_expression', 'update_expression', 'for_in_statement']),
    written(node) {
      if (node.type === 'for_in_statement' && forKind(node) !== null) return [];
      const target = node.childForFieldName(node.type === 'update_expression' ? 'argument' : 'left');
      // A member written (`client.timeout = 5`) is no name's new value.
      return target === null || !isPattern(target, kJsNames) ? [] : patternNames(target, kJsNames, kJsSkip);
    },
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
const kPythonSkip: Skip = new Map([['*', ['value', 'type']]]);
const kPythonFunctions = ['module', 'function_definition', 'lambda'];
const kPythonComprehensions = ['list_comprehension', 'set_comprehension', 'dictionary_comprehension', 'generator_expression'];
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
  // An assignment declares in its function (a block opens no scope), a comprehension's variables in it.
  scopes: {
    types: new Set([...kPythonFunctions, 'class_definition', ...kPythonComprehensions]),
    functions: new Set(kPythonFunctions),
    members: new Set(['module', 'class_definition']),
    classes: new Set(['class_definition']),
  },
  declarationTypes: new Set([
    'assignment',
    'parameters',
    'lambda_parameters',
    'for_statement',
    'for_in_clause',
    'as_pattern_target',
    'function_definition',
    'class_definition',
    'aliased_import',
    'import_statement',
    'import_from_statement',
    'global_statement',
    'nonlocal_statement',
  ]),
  declarations(node) {
    switch (node.type) {
      case 'assignment':
        return fieldBinding(node, 'left', 'right', kIdentifier, kPythonSkip);
      case 'parameters':
      case 'lambda_parameters':
      case 'as_pattern_target':
        return unvalued(patternNames(node, kIdentifier, kPythonSkip));
      case 'for_statement':
      case 'for_in_clause': {
        const left = node.childForFieldName('left');
        return left === null ? [] : unvalued(patternNames(left, kIdentifier, kPythonSkip));
      }
      case 'function_definition':
      case 'class_definition':
        return unvalued(fieldNames(node, 'name'), 'outer');
      case 'aliased_import':
        return unvalued(fieldNames(node, 'alias'));
      case 'global_statement':
      case 'nonlocal_statement':
        return unvalued(node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text));
      default:
        // `import a.b` names a; `from m import k` names k (an aliased one is its aliased_import's).
        return unvalued(node.childrenForFieldName('name').flatMap((n) => (n.type === 'dotted_name' ? [n.namedChildren[0]!.text] : [])));
    }
  },
  // A name made global or nonlocal is written from elsewhere: its value is no longer the file's to know.
  writeTypes: new Set(['augmented_assignment', 'named_expression', 'global_statement', 'nonlocal_statement']),
  written(node) {
    if (node.type === 'global_statement' || node.type === 'nonlocal_statement')
      return node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text);
    return fieldNames(node, node.type === 'named_expression' ? 'name' : 'left');
  },
  literal(node) {
    if (node.type !== 'string') return null;
    // An f-string's parts are interpolations; a byte or raw prefix is still a plain literal.
    return contentOf(node, kPythonContent);
  },
  boundName: (node) => nameOf(node, new Set(['identifier']), new Set(['attribute'])),
  openFeatureKeyAt: 0,
};

const kGoIdentifiers = new Set(['identifier']);
const kGoFunctions = ['source_file', 'function_declaration', 'method_declaration', 'func_literal'];

/** The plain names on the left of a Go assignment or range clause. */
function goTargets(node: SyntaxNode): string[] {
  return (node.childForFieldName('left')?.namedChildren ?? []).filter((n) => n.type === 'identifier').map((n) => n.text);
}
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
  scopes: {
    types: new Set([
      ...kGoFunctions,
      'block',
      'if_statement',
      'for_statement',
      'expression_switch_statement',
      'type_switch_statement',
      'select_statement',
      'expression_case',
      'type_case',
      'default_case',
      'communication_case',
    ]),
    functions: new Set(kGoFunctions),
    members: new Set(['source_file']),
  },
  declarationTypes: new Set([
    'const_spec',
    'var_spec',
    'short_var_declaration',
    'parameter_declaration',
    'variadic_parameter_declaration',
    'range_clause',
    'function_declaration',
  ]),
  declarations(node) {
    switch (node.type) {
      case 'parameter_declaration':
      case 'variadic_parameter_declaration':
        return unvalued(fieldNames(node, 'name'));
      case 'range_clause':
        return node.text.includes(':=') ? unvalued(goTargets(node)) : [];
      case 'function_declaration':
        return unvalued(fieldNames(node, 'name'), 'outer');
    }
    const spec = node.type === 'const_spec' || node.type === 'var_spec';
    const names = spec ? node.childrenForFieldName('name') : (node.childForFieldName('left')?.namedChildren ?? []);
    const values = node.childForFieldName(spec ? 'value' : 'right')?.namedChildren ?? [];
    const out: Declaration[] = [];
    names.forEach((target, i) => {
      // Several names from one value (`v, err := f()`) are declared with none.
      if (target.type === 'identifier') out.push({ name: target.text, value: values.length === names.length ? (values[i] ?? null) : null });
    });
    return out;
  },
  writeTypes: new Set(['assignment_statement', 'inc_statement', 'dec_statement', 'range_clause']),
  written: (node) =>
    node.type === 'range_clause' && node.text.includes(':=')
      ? []
      : node.type === 'assignment_statement' || node.type === 'range_clause'
        ? goTargets(node)
        : node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text),
  literal(node) {
    if (node.type === 'raw_string_literal') return node.text.slice(1, -1);
    return node.type === 'interpreted_string_literal' ? unquoted(node.text, '') : null;
  },
  boundName: (node) => nameOf(node, kGoIdentifiers, kGoMembers),
  openFeatureKeyAt: 1,
};

const kJavaContent = new Set(['string_fragment']);
const kJavaFunctions = ['method_declaration', 'constructor_declaration', 'lambda_expression'];
const kJava: Language = {
  name: 'java',
  grammar: 'java',
  callTypes: new Set(['method_invocation']),
  call(node) {
    const name = node.childForFieldName('name');
    if (name === null) return null;
    return { method: name.text, receiver: node.childForFieldName('object'), args: plainArgs(node.childForFieldName('arguments')) };
  },
  scopes: {
    types: new Set([
      ...kJavaFunctions,
      'program',
      'class_body',
      'interface_body',
      'enum_body',
      'block',
      'for_statement',
      'enhanced_for_statement',
      'try_with_resources_statement',
      'catch_clause',
      'switch_block',
    ]),
    functions: new Set(kJavaFunctions),
    members: new Set(['program', 'class_body', 'interface_body', 'enum_body']),
  },
  declarationTypes: new Set([
    'variable_declarator',
    'formal_parameter',
    'catch_formal_parameter',
    'enhanced_for_statement',
    'resource',
    'lambda_expression',
    'inferred_parameters',
    'instanceof_expression',
  ]),
  declarations(node) {
    switch (node.type) {
      case 'variable_declarator':
      case 'resource':
        return fieldBinding(node, 'name', 'value');
      case 'lambda_expression':
        return unvalued(fieldNames(node, 'parameters'));
      case 'inferred_parameters':
        return unvalued(node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text));
      default:
        return unvalued(fieldNames(node, 'name'));
    }
  },
  writeTypes: new Set(['assignment_expression', 'update_expression']),
  written: (node) =>
    node.type === 'assignment_expression'
      ? fieldNames(node, 'left')
      : node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text),
  literal: (node) => (node.type === 'string_literal' && !node.text.startsWith('"""') ? contentOf(node, kJavaContent) : null),
  boundName: (node) => nameOf(node, new Set(['identifier']), new Set(['field_access'])),
  openFeatureKeyAt: 0,
};

const kCsharpFunctions = [
  'compilation_unit',
  'method_declaration',
  'constructor_declaration',
  'local_function_statement',
  'lambda_expression',
  'anonymous_method_expression',
  'accessor_declaration',
];
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
  scopes: {
    types: new Set([
      ...kCsharpFunctions,
      'namespace_declaration',
      'declaration_list',
      'block',
      'for_statement',
      'for_each_statement',
      'using_statement',
      'catch_clause',
      'switch_section',
    ]),
    functions: new Set(kCsharpFunctions),
    members: new Set(['compilation_unit', 'namespace_declaration', 'declaration_list']),
  },
  declarationTypes: new Set([
    'variable_declarator',
    'parameter',
    'parameter_list',
    'for_each_statement',
    'catch_declaration',
    'declaration_pattern',
    'declaration_expression',
    'lambda_expression',
  ]),
  declarations(node) {
    switch (node.type) {
      case 'variable_declarator': {
        const target = node.namedChildren[0];
        const value = node.namedChildren.find((n) => n.type === 'equals_value_clause')?.namedChildren[0] ?? null;
        return target?.type === 'identifier' ? [{ name: target.text, value }] : [];
      }
      case 'for_each_statement':
        return unvalued(fieldNames(node, 'left'));
      case 'lambda_expression': {
        // `x => ...`: a lone parameter is the lambda's unnamed identifier child.
        const body = node.childForFieldName('body')?.id;
        return unvalued(node.namedChildren.filter((n) => n.type === 'identifier' && n.id !== body).map((n) => n.text));
      }
      default:
        // A parameter, a catch's, a pattern's or an out variable's name; `params T[] xs` is the list's own name.
        return unvalued(fieldNames(node, 'name'));
    }
  },
  writeTypes: new Set(['assignment_expression', 'postfix_unary_expression', 'prefix_unary_expression']),
  written: (node) =>
    node.type === 'assignment_expression'
      ? fieldNames(node, 'left')
      : /\+\+|--/.test(node.text)
        ? node.namedChildren.filter((n) => n.type === 'identifier').map((n) => n.text)
        : [],
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
const kKotlinFunctions = [
  'source_file',
  'function_declaration',
  'anonymous_function',
  'lambda_literal',
  'secondary_constructor',
  'getter',
  'setter',
];

/** The names a variable_declaration or a multi_variable_declaration declares. */
function kotlinNames(node: SyntaxNode): string[] {
  if (node.type === 'multi_variable_declaration') return node.namedChildren.flatMap(kotlinNames);
  const name = node.namedChildren[0];
  return name?.type === 'simple_identifier' ? [name.text] : [];
}
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
  scopes: {
    types: new Set([
      ...kKotlinFunctions,
      'class_declaration',
      'object_declaration',
      'companion_object',
      'class_body',
      'control_structure_body',
      'for_statement',
      'catch_block',
      'when_entry',
      'anonymous_initializer',
    ]),
    functions: new Set(kKotlinFunctions),
    members: new Set(['source_file', 'class_body']),
  },
  declarationTypes: new Set([
    'property_declaration',
    'parameter',
    'class_parameter',
    'lambda_parameters',
    'lambda_literal',
    'for_statement',
    'catch_block',
  ]),
  declarations(node) {
    const parts = node.namedChildren;
    switch (node.type) {
      case 'property_declaration': {
        const declaration = parts.find((n) => n.type === 'variable_declaration' || n.type === 'multi_variable_declaration');
        if (declaration?.type !== 'variable_declaration') return declaration === undefined ? [] : unvalued(kotlinNames(declaration));
        const name = declaration.namedChildren[0];
        const value = parts.at(-1);
        if (name?.type !== 'simple_identifier') return [];
        return [{ name: name.text, value: value === undefined || value === declaration ? null : value }];
      }
      case 'lambda_literal':
        // A lambda without parameters has `it`.
        return parts.some((n) => n.type === 'lambda_parameters') ? [] : [{ name: 'it', value: null }];
      case 'lambda_parameters':
      case 'for_statement': {
        const declared = parts.filter((n) => n.type === 'variable_declaration' || n.type === 'multi_variable_declaration');
        return unvalued(declared.flatMap(kotlinNames));
      }
      default:
        // A parameter's, a class parameter's or a catch's name: its first name.
        return unvalued(
          parts
            .filter((n) => n.type === 'simple_identifier')
            .slice(0, 1)
            .map((n) => n.text),
        );
    }
  },
  writeTypes: new Set(['assignment']),
  written(node) {
    const target = node.namedChildren[0];
    const name = target?.namedChildren[0];
    return name?.type === 'simple_identifier' && target!.namedChildCount === 1 ? [name.text] : [];
  },
  literal: (node) => (node.type === 'string_literal' && !node.text.startsWith('"""') ? contentOf(node, kKotlinContent) : null),
  boundName: (node) => nameOf(node, new Set(['simple_identifier']), new Set(['navigation_expression'])),
  openFeatureKeyAt: 0,
};

const kRubyContent = new Set(['string_content']);
const kRubyNames: ReadonlySet<string> = new Set(['identifier', 'constant']);
const kRubySkip: Skip = new Map([['*', ['value', 'right']]]);
const kRubyBoundaries = ['program', 'method', 'singleton_method', 'class', 'module', 'singleton_class'];
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
  // A def, class or module hides the locals around it; a block sees them, and assigning one there writes it.
  scopes: {
    types: new Set([...kRubyBoundaries, 'block', 'do_block', 'lambda']),
    functions: new Set(kRubyBoundaries),
    members: new Set(['program', 'class', 'module', 'singleton_class']),
    localBoundaries: new Set(kRubyBoundaries),
  },
  declarationTypes: new Set(['assignment', 'method_parameters', 'block_parameters', 'lambda_parameters', 'for', 'exception_variable']),
  declarations(node) {
    if (node.type === 'assignment') return fieldBinding(node, 'left', 'right', kRubyNames, kRubySkip);
    if (node.type === 'for') {
      const pattern = node.childForFieldName('pattern');
      return pattern === null ? [] : unvalued(patternNames(pattern, kRubyNames, kRubySkip));
    }
    return unvalued(patternNames(node, kIdentifier, kRubySkip));
  },
  writeTypes: new Set(['assignment', 'operator_assignment']),
  written(node) {
    const target = node.childForFieldName('left');
    return target === null || !isPattern(target, kRubyNames) ? [] : patternNames(target, kRubyNames, kRubySkip);
  },
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
