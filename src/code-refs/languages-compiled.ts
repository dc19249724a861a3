// Go, Java, C# and Kotlin as a scan reads them (languages.ts): their calls, scopes, declarations,
// writes, literals and names, by their tree-sitter grammars' node types.
import type { SyntaxNode } from './grammars.js';
import { calleeShape, contentOf, fieldBinding, fieldNames, nameOf, plainArgs, unquoted, unvalued } from './language-shapes.js';
import type { CallArgument, Language } from './languages.js';
import type { Declaration } from './scopes.js';

const kGoIdentifiers = new Set(['identifier']);
const kGoFunctions = ['source_file', 'function_declaration', 'method_declaration', 'func_literal'];

/** The plain names on the left of a Go assignment or range clause. */
function goTargets(node: SyntaxNode): string[] {
  return (node.childForFieldName('left')?.namedChildren ?? []).filter((n) => n.type === 'identifier').map((n) => n.text);
}
const kGoMembers = new Set(['selector_expression']);
export const kGo: Language = {
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
export const kJava: Language = {
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
export const kCsharp: Language = {
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
export const kKotlin: Language = {
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
