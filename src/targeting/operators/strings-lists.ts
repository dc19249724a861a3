// The rule compiler's operators on strings and lists: in, cat, substr, max, min, merge.
// Each compiles its operands once into closures; compile-rule.ts holds the compiler and the table these
// join, rule-node.ts the shapes they share.
import { appendText, catInterpreted, extreme, includes, merge, substr } from '../json-logic.js';
import { type OperatorCompiler, type Rule, dynamic, evaluateAll, kCompiled, literal, rulesOf } from '../rule-node.js';
import { charge } from '../work-budget.js';

const compileIn: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'in', 2, 2, dialect);
  if (nodes === null) return literal(null);
  const [needle, haystack] = rulesOf(nodes) as [Rule, Rule];
  // The list first, then the item: the engine's order (`(list || []).includes(item)`), which decides
  // what `prev` holds afterwards.
  if (nodes[1]!.kind !== 'dynamic') {
    return dynamic((s) => {
      const list = haystack(s);
      return includes(needle(s), list);
    });
  }
  // A list or string computed at evaluation (read from the context, or built) is scanned: charged by its
  // length. One written in the rule is not: its scans are bounded by the rule's own size.
  return dynamic((s) => {
    const list = haystack(s);
    if (typeof list === 'string' || Array.isArray(list)) charge(list.length);
    return includes(needle(s), list);
  });
};

/** `cat`. Compiled: `'' + a + b ...`. Interpreted: nulls skipped, and one non-array operand's value used whole. */
const compileCat: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'cat', 1, Number.POSITIVE_INFINITY, dialect);
  if (nodes === null) return literal(null);
  const rules = rulesOf(nodes);
  if (dialect === kCompiled) {
    return dynamic((s) => {
      let out = '';
      for (let i = 0; i < rules.length; i++) out = appendText(out, rules[i]!(s));
      return out;
    });
  }
  if (rules.length === 1 && !Array.isArray((args as unknown[])[0])) {
    const only = rules[0]!;
    return dynamic((s) => {
      const v = only(s);
      if (typeof v === 'string') return v;
      // null and undefined have no toString: the engine throws, and so do we.
      return Array.isArray(v) ? catInterpreted(v) : (v as { toString(): string }).toString();
    });
  }
  return dynamic((s) => catInterpreted(evaluateAll(rules, s)));
};

const compileSubstr: OperatorCompiler = (c, args, path, dialect) => {
  const nodes = c.nodes(args, path, 'substr', 2, 3, dialect);
  if (nodes === null) return literal(null);
  const [text, from, length] = rulesOf(nodes) as [Rule, Rule, Rule?];
  return dynamic((s) => substr(text(s), from(s), length === undefined ? undefined : length(s)));
};

function listOperator(op: string, apply: (values: unknown[]) => unknown): OperatorCompiler {
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 1, Number.POSITIVE_INFINITY, dialect);
    if (nodes === null) return literal(null);
    const rules = rulesOf(nodes);
    return dynamic((s) => apply(evaluateAll(rules, s)));
  };
}

export const kStringListOperators: Readonly<Record<string, OperatorCompiler>> = {
  in: compileIn,
  cat: compileCat,
  substr: compileSubstr,
  max: listOperator('max', (v) => extreme(v, true)),
  min: listOperator('min', (v) => extreme(v, false)),
  merge: listOperator('merge', merge),
};
