// The rule compiler's comparisons and logic: == === != !== < <= > >=, and, or, if, !, !!.
// Each compiles its operands once into closures; compile-rule.ts holds the compiler and the table these
// join, rule-node.ts the shapes they share.
import { compareOperand, interpretedOperands, isTruthy, kComparisons } from '../json-logic.js';
import { type OperatorCompiler, type Rule, dynamic, kCompiled, kInterpreted, literal, rulesOf } from '../rule-node.js';

/**
 * The compiled comparison is `(prev = a) OP compareCheck(b, prev)`, and three operands chain as
 * `(prev = a) OP (prev = compareCheck(b, prev)) && prev OP (prev = compareCheck(c, prev))`. `prev` is
 * read after the right operand ran, so when that operand assigns it (a `var`, `and`, another comparison)
 * the coercion is checked against that value instead of the left operand: `{">": ["nope", {"var": "n"}]}`
 * with n = 0 is false there, not an error. We keep `prev` in the scope to answer the same.
 */
function comparison(op: string, maxOperands: number): OperatorCompiler {
  const compare = kComparisons[op]!;
  const strict = op.length === 3;
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 2, maxOperands, dialect);
    if (nodes === null) return literal(null);
    const [a, b, third] = rulesOf(nodes) as [Rule, Rule, Rule?];
    if (dialect === kCompiled) {
      if (third === undefined) {
        return dynamic((s) => {
          const x = a(s);
          s.prev = x;
          const y = b(s);
          return compare(x, strict ? y : compareOperand(y, s.prev));
        });
      }
      return dynamic((s) => {
        const x = a(s);
        s.prev = x;
        const yRaw = b(s);
        const y = compareOperand(yRaw, s.prev);
        s.prev = y;
        if (!compare(x, y)) return false;
        const zRaw = third(s);
        const z = compareOperand(zRaw, s.prev);
        s.prev = z;
        return compare(y, z);
      });
    }
    if (strict) return dynamic((s) => compare(a(s), b(s)));
    const interpreted = (x: unknown, y: unknown) => (interpretedOperands(x, y) ? compare(+(x as number), +(y as number)) : compare(x, y));
    if (third === undefined) return dynamic((s) => interpreted(a(s), b(s)));
    return dynamic((s) => {
      const x = a(s);
      const y = b(s);
      return interpreted(x, y) && interpreted(y, third(s));
    });
  };
}

// ── Logic ─────────────────────────────────────────────────────────────────────────────────────────

/** `and` / `or`: the first falsy / truthy operand, else the last. Compiled, each operand's value passes through `prev`. */
function andOr(op: 'and' | 'or'): OperatorCompiler {
  const stopOn = op === 'or';
  return (c, args, path, dialect) => {
    const nodes = c.nodes(args, path, op, 1, Number.POSITIVE_INFINITY, dialect);
    if (nodes === null) return literal(null);
    const rules = rulesOf(nodes);
    const compiled = dialect === kCompiled;
    return dynamic((s) => {
      let item: unknown = null;
      for (let i = 0; i < rules.length; i++) {
        item = rules[i]!(s);
        if (compiled) s.prev = item;
        if (isTruthy(item) === stopOn) return item;
      }
      return item;
    });
  };
}

/**
 * `if`: [condition, then, condition, then, ..., else]. The engine compiles an `if` of three or more
 * operands; one of one or two operands it hands to its interpreter, operands included.
 */
const compileIf: OperatorCompiler = (c, args, path, dialect) => {
  const operands = c.operands(args, path, 'if', 1, Number.POSITIVE_INFINITY);
  if (operands === null) return literal(null);
  const inner = operands.length >= 3 ? dialect : kInterpreted;
  const rules = operands.map((arg, i) => c.node(arg, [...path, i], inner).rule);
  if (rules.length === 1) return dynamic(rules[0]!);
  const otherwise = rules.length % 2 === 1 ? rules[rules.length - 1]! : () => null;
  const pairs = rules.length - (rules.length % 2);
  return dynamic((s) => {
    for (let i = 0; i < pairs; i += 2) if (isTruthy(rules[i]!(s))) return rules[i + 1]!(s);
    return otherwise(s);
  });
};

/**
 * `!` and `!!`. Compiled: the first operand's truthiness. Interpreted: when the operand list is one
 * non-array item, that item's value is used, and if the value is an array its first element is tested.
 */
function negation(op: '!' | '!!'): OperatorCompiler {
  const negate = op === '!';
  return (c, args, path, dialect) => {
    const list = Array.isArray(args);
    // The operand: the first of a list, or the value itself.
    const operand = () => (list ? c.node(args[0], [...path, 0], dialect).rule : c.node(args, path, dialect).rule);
    let subject: Rule;
    if (dialect === kCompiled) subject = operand();
    else if (!list || (args.length === 1 && !Array.isArray(args[0]))) {
      const inner = operand();
      subject = (s) => {
        const v = inner(s);
        return Array.isArray(v) ? v[0] : v;
      };
    } else {
      const all = c.node(args, path, dialect).rule;
      subject = (s) => (all(s) as unknown[])[0];
    }
    return dynamic((s) => isTruthy(subject(s)) !== negate);
  };
}

export const kLogicOperators: Readonly<Record<string, OperatorCompiler>> = {
  '==': comparison('==', 2),
  '===': comparison('===', 2),
  '!=': comparison('!=', 2),
  '!==': comparison('!==', 2),
  '<': comparison('<', 3),
  '<=': comparison('<=', 3),
  '>': comparison('>', 2),
  '>=': comparison('>=', 2),
  and: andOr('and'),
  or: andOr('or'),
  if: compileIf,
  '!': negation('!'),
  '!!': negation('!!'),
};
