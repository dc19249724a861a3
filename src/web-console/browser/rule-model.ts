// The rule builder's model of a flagd targeting rule, and the conversion both ways (issue 47). Pure and
// DOM-free, so it is unit-tested in Node (test/web-console/browser/rule-model.test.ts). What the builder
// can show is one `if` chain of branches, each a condition tree on context attributes and a variant or a
// weighted split, then what everyone else gets:
//
//   {"if": [cond1, outcome1, cond2, outcome2, ..., otherwise?]}      or, with no branch, a bare split
//   cond    = {"and" | "or": [cond, ...]} | {"!": cond} | {"!": [cond]} | {op: [{"var": name}, value...]}
//           | {"$ref": name}                                     (one of the project's shared fragments)
//   outcome = "variant" | null | {"fractional": [{"var": name}?, ["variant", weight?], ...]}
//
// ruleToModel(rule) then modelToRule(model) gives back the same JSON (test: every operator round-trips),
// so opening a rule in the builder never rewrites it; a rule outside this shape is named with the reason
// and stays in the JSON view.

/** A value a condition compares with: flagd's `==`, `!=` and `in` compare JSON scalars. */
export type Scalar = string | number | boolean;

export const kCompareOps = ['==', '!=', 'in', 'starts_with', 'ends_with', 'sem_ver', '<', '<=', '>', '>='] as const;
export type CompareOp = (typeof kCompareOps)[number];
/** flagd's sem_ver comparisons (src/targeting/sem-ver.ts): `^` same major, `~` same minor. */
export const kSemVerOps = ['=', '!=', '<', '<=', '>', '>=', '^', '~'] as const;
export type SemVerOp = (typeof kSemVerOps)[number];

/** What each operator reads as in the builder. */
export const kOpLabels: Readonly<Record<CompareOp, string>> = {
  '==': 'equals',
  '!=': 'does not equal',
  in: 'is one of',
  starts_with: 'starts with',
  ends_with: 'ends with',
  sem_ver: 'version',
  '<': 'is less than',
  '<=': 'is at most',
  '>': 'is more than',
  '>=': 'is at least',
};

export type Compare =
  | { readonly kind: 'compare'; attribute: string; op: '==' | '!='; value: Scalar }
  | { readonly kind: 'compare'; attribute: string; op: 'in'; value: Scalar[] }
  | { readonly kind: 'compare'; attribute: string; op: 'starts_with' | 'ends_with'; value: string }
  | { readonly kind: 'compare'; attribute: string; op: 'sem_ver'; semVer: SemVerOp; value: string }
  | { readonly kind: 'compare'; attribute: string; op: '<' | '<=' | '>' | '>='; value: number };

/** A shared fragment's rule, by name (`{"$ref": name}`): the project's, listed on its Shared fragments page. */
export interface FragmentCondition {
  readonly kind: 'fragment';
  name: string;
}

/** `all` is JsonLogic's `and`, `any` its `or`; `not` holds one node (`bare`: written `{"!": x}`, not `{"!": [x]}`). */
export type RuleNode =
  | Compare
  | FragmentCondition
  | { readonly kind: 'all' | 'any'; items: RuleNode[] }
  | { readonly kind: 'not'; item: RuleNode; bare: boolean };

export interface Bucket {
  variant: string;
  /** null: written without a weight, which flagd counts as 1. */
  weight: number | null;
}

/**
 * What a branch serves: a variant by name, the flag's default variant (`null` in the rule), or a split.
 * A split buckets by `by`, a context attribute, or (null) flagd's default key: the flag's name and the targeting key.
 */
export type Outcome =
  | { readonly kind: 'variant'; name: string }
  | { readonly kind: 'default' }
  | { readonly kind: 'split'; by: string | null; buckets: Bucket[] };

export interface Branch {
  when: RuleNode;
  serve: Outcome;
}

export interface RuleModel {
  branches: Branch[];
  /** What no branch's condition gives; null: left out of the rule (flagd then gives the default variant too). */
  otherwise: Outcome | null;
}

export type ToModel = { readonly ok: true; readonly model: RuleModel } | { readonly ok: false; readonly why: string };

type Json = unknown;

class NotShown extends Error {}

const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: Json): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** The object's one key and its value, or why not. */
function single(v: Json, what: string): [string, Json] {
  if (!isObject(v)) throw new NotShown(`${what} is ${JSON.stringify(v)}, not an operation`);
  const keys = Object.keys(v);
  if (keys.length !== 1) throw new NotShown(`${what} has ${keys.length} keys; an operation has one`);
  return [keys[0]!, v[keys[0]!]];
}

/** `{"var": "name"}` exactly (no default value, no list form): the attribute's name. */
function attributeOf(v: Json): string | null {
  if (!isObject(v) || Object.keys(v).length !== 1 || typeof v.var !== 'string' || v.var === '') return null;
  return v.var;
}

function nodeOf(v: Json): RuleNode {
  const [op, args] = single(v, 'a condition');
  if (op === '$ref') {
    if (typeof args !== 'string') throw new NotShown('a "$ref" that names no fragment');
    return { kind: 'fragment', name: args };
  }
  if (op === 'and' || op === 'or') {
    if (!Array.isArray(args) || args.length === 0) throw new NotShown(`an "${op}" without conditions`);
    return { kind: op === 'and' ? 'all' : 'any', items: args.map(nodeOf) };
  }
  if (op === '!') {
    if (Array.isArray(args)) {
      if (args.length !== 1) throw new NotShown('a "!" of more than one value');
      return { kind: 'not', item: nodeOf(args[0]), bare: false };
    }
    return { kind: 'not', item: nodeOf(args), bare: true };
  }
  if (!(kCompareOps as readonly string[]).includes(op)) throw new NotShown(`the operator "${op}"`);
  return compareOf(op as CompareOp, args);
}

function compareOf(op: CompareOp, args: Json): Compare {
  const n = op === 'sem_ver' ? 3 : 2;
  if (!Array.isArray(args) || args.length !== n) throw new NotShown(`a "${op}" with other than ${n} operands`);
  const attribute = attributeOf(args[0]);
  if (attribute === null) throw new NotShown(`a "${op}" whose first operand is not an attribute ({"var": "name"})`);
  const value = args[n - 1];
  switch (op) {
    case '==':
    case '!=':
      if (!isScalar(value)) throw new NotShown(`a "${op}" with ${JSON.stringify(value)}: it compares with text, a number or true/false`);
      return { kind: 'compare', attribute, op, value };
    case 'in':
      if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar) || new Set(value.map((x) => typeof x)).size !== 1)
        throw new NotShown('an "in" whose values are not a list of text, numbers or true/false, all of one type');
      return { kind: 'compare', attribute, op, value: [...value] };
    case 'starts_with':
    case 'ends_with':
      if (typeof value !== 'string') throw new NotShown(`a "${op}" with ${JSON.stringify(value)}, not text`);
      return { kind: 'compare', attribute, op, value };
    case 'sem_ver': {
      const semVer = args[1];
      if (!(kSemVerOps as readonly Json[]).includes(semVer) || typeof value !== 'string')
        throw new NotShown('a "sem_ver" that is not an attribute, a comparison and a version');
      return { kind: 'compare', attribute, op, semVer: semVer as SemVerOp, value };
    }
    default:
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new NotShown(`a "${op}" with ${JSON.stringify(value)}, not a number`);
      return { kind: 'compare', attribute, op, value };
  }
}

function outcomeOf(v: Json): Outcome {
  if (typeof v === 'string') return { kind: 'variant', name: v };
  if (v === null) return { kind: 'default' };
  const [op, args] = single(v, 'what a branch serves');
  if (op !== 'fractional') throw new NotShown(`a branch serving "${op}": a branch serves a variant or a split`);
  if (!Array.isArray(args) || args.length === 0) throw new NotShown('a "fractional" without buckets');
  let by: string | null = null;
  let rest = args;
  if (!Array.isArray(args[0])) {
    by = attributeOf(args[0]);
    if (by === null)
      throw new NotShown('a "fractional" bucketing by an expression; the builder buckets by the default key or one attribute');
    rest = args.slice(1);
  }
  if (rest.length === 0) throw new NotShown('a "fractional" without buckets');
  const buckets = rest.map((b): Bucket => {
    if (!Array.isArray(b) || b.length < 1 || b.length > 2 || typeof b[0] !== 'string')
      throw new NotShown('a "fractional" bucket that is not ["variant", weight]');
    if (b.length === 1) return { variant: b[0], weight: null };
    if (typeof b[1] !== 'number' || !Number.isInteger(b[1]) || b[1] < 0)
      throw new NotShown('a "fractional" weight that is not a whole number');
    return { variant: b[0], weight: b[1] };
  });
  return { kind: 'split', by, buckets };
}

/** A flagd targeting rule as the builder's model, or the sentence saying why the builder cannot show it. */
export function ruleToModel(rule: Json): ToModel {
  try {
    if (!isObject(rule)) throw new NotShown('the rule is not a JSON object');
    if (Object.keys(rule).length === 0) return { ok: true, model: { branches: [], otherwise: null } };
    const [op, args] = single(rule, 'the rule');
    if (op === 'fractional') return { ok: true, model: { branches: [], otherwise: outcomeOf(rule) } };
    if (op !== 'if') throw new NotShown(`its top is "${op}": the builder shows an "if" chain or a split`);
    if (!Array.isArray(args) || args.length < 2) throw new NotShown('an "if" without a condition and a result');
    const branches: Branch[] = [];
    for (let i = 0; i + 1 < args.length; i += 2) branches.push({ when: nodeOf(args[i]), serve: outcomeOf(args[i + 1]) });
    const otherwise = args.length % 2 === 1 ? outcomeOf(args[args.length - 1]) : null;
    return { ok: true, model: { branches, otherwise } };
  } catch (err) {
    if (err instanceof NotShown) return { ok: false, why: `The builder cannot show this rule (${err.message}); edit it as JSON.` };
    throw err;
  }
}

function nodeRule(node: RuleNode): Json {
  switch (node.kind) {
    case 'all':
      return { and: node.items.map(nodeRule) };
    case 'any':
      return { or: node.items.map(nodeRule) };
    case 'not':
      return { '!': node.bare ? nodeRule(node.item) : [nodeRule(node.item)] };
    case 'fragment':
      return { $ref: node.name };
    case 'compare': {
      const attribute = { var: node.attribute };
      if (node.op === 'sem_ver') return { sem_ver: [attribute, node.semVer, node.value] };
      return { [node.op]: [attribute, Array.isArray(node.value) ? [...node.value] : node.value] };
    }
  }
}

function outcomeRule(outcome: Outcome): Json {
  if (outcome.kind === 'variant') return outcome.name;
  if (outcome.kind === 'default') return null;
  const buckets = outcome.buckets.map((b) => (b.weight === null ? [b.variant] : [b.variant, b.weight]));
  return { fractional: outcome.by === null ? buckets : [{ var: outcome.by }, ...buckets] };
}

/**
 * The model as the JsonLogic flagd loads. No branch: the split alone, or `{}` (no rule: the default
 * variant); modelProblems refuses a model with no branch serving one variant (a rule must be an object).
 */
export function modelToRule(model: RuleModel): Record<string, Json> {
  if (model.branches.length === 0) return model.otherwise?.kind === 'split' ? (outcomeRule(model.otherwise) as Record<string, Json>) : {};
  const args: Json[] = model.branches.flatMap((b) => [nodeRule(b.when), outcomeRule(b.serve)]);
  if (model.otherwise !== null) args.push(outcomeRule(model.otherwise));
  return { if: args };
}

/** A split's buckets as whole percentages of their total weight (flagd counts a bucket without a weight as 1). */
export function splitPercentages(buckets: readonly Bucket[]): number[] {
  const weights = buckets.map((b) => b.weight ?? 1);
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => (total === 0 ? 0 : Math.round((w * 1000) / total) / 10));
}

/** flagd's fractional refuses a total weight above 2^31 - 1 (src/targeting/fractional.ts). */
const kMaxTotalWeight = 2147483647;

/**
 * The builder's own checks, each a sentence naming its place ("Branch 2, condition 1: ..."): what the
 * server would refuse (a fragment the project does not have, of `fragments`), or what flagd would load
 * but never serve (a variant that is no variant). Empty: send it.
 */
export function modelProblems(model: RuleModel, variants: readonly string[], fragments: readonly string[] = []): string[] {
  const problems: string[] = [];
  const outcome = (o: Outcome, where: string) => {
    if (o.kind === 'variant' && !variants.includes(o.name)) problems.push(`${where} serves "${o.name}", which is no variant.`);
    if (o.kind !== 'split') return;
    if (o.by === '') problems.push(`${where}: name the attribute the split buckets by.`);
    const total = o.buckets.reduce((sum, b) => sum + (b.weight ?? 1), 0);
    for (const [i, b] of o.buckets.entries()) {
      if (!variants.includes(b.variant)) problems.push(`${where}, share ${i + 1}: "${b.variant}" is no variant.`);
      if (b.weight !== null && (!Number.isInteger(b.weight) || b.weight < 0))
        problems.push(`${where}, share ${i + 1}: a weight is a whole number, 0 or more.`);
    }
    if (total <= 0 || total > kMaxTotalWeight)
      problems.push(`${where}: the weights add up to ${total}; give at least one share some weight.`);
  };
  const node = (n: RuleNode, where: string) => {
    if (n.kind === 'not') return node(n.item, where);
    if (n.kind === 'fragment') {
      if (!fragments.includes(n.name))
        problems.push(
          n.name === ''
            ? `${where}: pick a shared fragment.`
            : `${where}: "${n.name}" is no shared fragment of this project (its Shared fragments page lists them).`,
        );
      return;
    }
    if (n.kind !== 'compare') {
      if (n.items.length === 0) problems.push(`${where}: a group needs at least one condition.`);
      for (const [i, item] of n.items.entries()) node(item, `${where}.${i + 1}`);
      return;
    }
    if (n.attribute === '') problems.push(`${where}: name the attribute to compare.`);
    if (n.op === 'in' && n.value.length === 0) problems.push(`${where}: list at least one value.`);
    const values: readonly Scalar[] = Array.isArray(n.value) ? n.value : [n.value];
    if (values.some((v) => typeof v === 'number' && !Number.isFinite(v))) problems.push(`${where}: write the value as a number.`);
    if (n.op === 'sem_ver' && n.value === '') problems.push(`${where}: give a version such as 1.2.0.`);
  };
  for (const [i, b] of model.branches.entries()) {
    node(b.when, `Branch ${i + 1}, condition 1`);
    outcome(b.serve, `Branch ${i + 1}`);
  }
  if (model.otherwise !== null) outcome(model.otherwise, 'Otherwise');
  if (model.branches.length === 0 && model.otherwise?.kind === 'variant')
    problems.push(
      `With no branch, make "${model.otherwise.name}" the default variant instead: a rule serving one variant to everyone is no rule.`,
    );
  return problems;
}
