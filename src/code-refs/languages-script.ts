// TypeScript, JavaScript, Python and Ruby as a scan reads them (languages.ts): their calls, scopes,
// declarations, writes, literals and names, by their tree-sitter grammars' node types.
import type { SyntaxNode } from './grammars.js';
import {
  calleeShape,
  contentOf,
  fieldBinding,
  fieldNames,
  isPattern,
  kIdentifier,
  nameOf,
  patternNames,
  plainArgs,
  unvalued,
  type Skip,
} from './language-shapes.js';
import type { CallArgument, Language } from './languages.js';
import type { Declaration, ScopeRules } from './scopes.js';

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

export function javascriptLike(name: 'typescript' | 'tsx' | 'javascript'): Language {
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
export const kPython: Language = {
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

const kRubyContent = new Set(['string_content']);
const kRubyNames: ReadonlySet<string> = new Set(['identifier', 'constant']);
const kRubySkip: Skip = new Map([['*', ['value', 'right']]]);
const kRubyBoundaries = ['program', 'method', 'singleton_method', 'class', 'module', 'singleton_class'];
export const kRuby: Language = {
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
