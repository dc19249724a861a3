// Shared rules: `{"$ref": "name"}` anywhere in a rule stands for `$evaluators.name`. References are
// replaced by the rules they name, evaluators referring to evaluators included, whatever their order in
// the document; a reference to no evaluator, or a cycle, is a problem. (flagd-core replaces the text
// `{"$ref":"name"}` one evaluator after the other, so there an evaluator that refers to one declared
// before it stays unresolved and fails its flags: the only difference, and in our favour.)
//
// Bounded work (docs/operations.md, "Rules: resolved size"). References form a DAG, so a kilobyte of
// evaluators that each refer to the level below twice, 20 levels deep, resolves to tens of megabytes:
// everything after this (the check of its operators, the store, an export, each worker's compiled
// closures, a plan's diff) works on the rule resolved, not as written. So a rule is measured resolved,
// as the bytes of its compact JSON, without writing it out: each evaluator's size is counted once and
// memoised, and a reference counts its evaluator's size. A resolved evaluator is shared, not copied, so
// resolving costs what the text does; a rule over a limit is a problem before anything walks it.
//
//   l0:  {"==":[{"var":"plan"},"pro"]}         29 bytes
//   l1:  {"or":[{"$ref":"l0"},{"$ref":"l0"}]}   10 + 2 * 29 bytes resolved (l0 counted once)
//   l20: ...                                   about 2^20 * 39 bytes: refused, naming it and each flag using it
import { type DefinitionProblem, formatPath, kProblems, type PathStep } from './problems.js';

/**
 * The most one rule (a flag's, or an evaluator) may weigh resolved: its compact JSON, `$ref`s replaced,
 * in UTF-8. The request body's limit: a rule can be no larger than a body could carry written out.
 */
export const kMaxRuleBytes = 1024 * 1024;
/**
 * The most the references of one document may add to its rules, in all: each rule's resolved bytes less
 * its written ones, summed over its flags' rules and its evaluators (each is checked resolved). Each flag
 * stores its own rule, so 10,000 flags that each refer to a 1 MiB evaluator would store 10 GB from a
 * 1 MiB file, and 1,000 evaluators that each refer to one would be checked as 1 GB. With it, a
 * document's rules resolved are at most 1 MiB more than it wrote.
 */
export const kMaxAddedRuleBytes = 1024 * 1024;

/**
 * How deep one rule may nest resolved (arrays and objects, through its references), and how long a
 * chain of evaluators referring to each other may be. The walk, the rule check and the compiler recurse
 * per level: without a bound, a rule nested some thousands of levels deep (or an evaluator chain as long)
 * overflowed the stack and answered 500. Real rules nest a handful of levels.
 */
export const kMaxRuleDepth = 64;

/** Compact JSON bytes of a reference as written, less its name: `{"$ref":}`. */
const kRefBytes = 9;

/** The compact JSON bytes (UTF-8) of a string, number, boolean or null. */
function scalarBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(JSON.stringify(value));
  return (JSON.stringify(value) ?? 'null').length;
}

/** What a walk counted: the bytes of what it resolved, and what references added to them. */
interface Measure {
  bytes: number;
  added: number;
  /** The deepest level reached resolved (the rule itself is level 0). */
  depth: number;
  /** The rule as written nests past kMaxRuleDepth: the walk stopped there, so its bytes are not all counted. */
  truncated: boolean;
}

export class RefResolver {
  /** Evaluators already resolved, by name (a reference used by many flags is resolved once); null when refused. */
  private readonly resolved = new Map<string, unknown>();
  /** Each resolved evaluator's size (kMaxRuleBytes), refused ones included: a rule using one is as large. */
  private readonly sizes = new Map<string, number>();
  /** Each resolved evaluator's depth (kMaxRuleDepth): a reference nests it where the reference stands. */
  private readonly depths = new Map<string, number>();
  private readonly names: string[];
  /** What references added to the rules resolved so far (kMaxAddedRuleBytes). */
  private added = 0;

  /**
   * `unknown`: what a reference to no evaluator is told; a flag set's words by default, a project's
   * shared fragments' (src/fragments) for a rule Flagwire stores. `maxAdded`: what the references of
   * every rule this resolver resolves may add in all; a reader of stored rules, which were counted
   * when written (src/flags/fragment-refs.ts), resolves them all with one resolver and no such bound.
   */
  constructor(
    private readonly evaluators: Readonly<Record<string, unknown>>,
    private readonly problems: DefinitionProblem[],
    private readonly unknown: (name: string, known: readonly string[]) => string = kProblems.unknownEvaluator,
    private readonly maxAdded: number = kMaxAddedRuleBytes,
  ) {
    this.names = Object.keys(evaluators);
  }

  /** Every evaluator, resolved (their own problems reported with `$evaluators.NAME` paths). */
  resolveAll(): void {
    for (const name of this.names) this.evaluator(name, []);
  }

  /** An evaluator's rule with its own references replaced; null when it was refused. */
  resolvedEvaluator(name: string): unknown {
    return this.evaluator(name, []);
  }

  /**
   * `rule` with every reference replaced; `path` is where `rule` sits, for problems in `flag`. A rule
   * over a limit is reported and resolves to null (nothing after this may walk it).
   */
  resolve(rule: unknown, flag: string | null, path: PathStep[]): unknown {
    const measure: Measure = { bytes: 0, added: 0, depth: 0, truncated: false };
    return this.bounded(this.walk(rule, flag, path, [], measure, 0), measure, flag, path);
  }

  private evaluator(name: string, chain: readonly string[]): unknown {
    const done = this.resolved.get(name);
    if (done !== undefined) return done;
    const measure: Measure = { bytes: 0, added: 0, depth: 0, truncated: false };
    const path = ['$evaluators', name];
    const body = this.bounded(this.walk(this.evaluators[name], null, path, [...chain, name], measure, 0), measure, null, path);
    this.resolved.set(name, body);
    this.sizes.set(name, measure.bytes);
    this.depths.set(name, measure.depth);
    return body;
  }

  /** `body` when its measure is within both limits; else the problem is reported and it is null. */
  private bounded(body: unknown, measure: Measure, flag: string | null, path: PathStep[]): unknown {
    const at = formatPath(path);
    if (measure.truncated) return this.report(flag, at, kProblems.ruleTooDeep(kMaxRuleDepth));
    if (measure.bytes > kMaxRuleBytes) return this.report(flag, at, kProblems.ruleTooLarge(measure.bytes, kMaxRuleBytes));
    this.added += measure.added;
    if (measure.added > 0 && this.added > this.maxAdded)
      return this.report(flag, at, kProblems.refsAddTooMuch(measure.added, this.added, this.maxAdded));
    // Deep only through its references: sizes first, which say more (a doubling chain is both).
    if (measure.depth > kMaxRuleDepth) return this.report(flag, at, kProblems.ruleTooDeep(kMaxRuleDepth));
    return body;
  }

  private walk(node: unknown, flag: string | null, path: PathStep[], chain: readonly string[], measure: Measure, depth: number): unknown {
    if (depth > measure.depth) measure.depth = depth;
    // Past the limit the rule is refused (bounded); walking on would only risk the stack.
    if (depth > kMaxRuleDepth) {
      measure.truncated = true;
      return null;
    }
    if (Array.isArray(node)) {
      measure.bytes += node.length === 0 ? 2 : node.length + 1;
      return node.map((item, i) => this.walk(item, flag, [...path, i], chain, measure, depth + 1));
    }
    if (node === null || typeof node !== 'object') {
      measure.bytes += scalarBytes(node);
      return node;
    }
    const keys = Object.keys(node);
    const object = node as Record<string, unknown>;
    if (keys.length === 1 && keys[0] === '$ref') return this.reference(object.$ref, flag, path, chain, measure, depth);
    measure.bytes += keys.length === 0 ? 2 : keys.length + 1;
    // fromEntries, not assignment: a key "__proto__" is a key like any other (assigned, it would set the prototype).
    return Object.fromEntries(
      keys.map((key) => {
        measure.bytes += scalarBytes(key) + 1;
        return [key, this.walk(object[key], flag, [...path, key], chain, measure, depth + 1)];
      }),
    );
  }

  /** A `{"$ref": name}`: the evaluator's resolved rule, counted at its resolved size; null after a problem. */
  private reference(
    name: unknown,
    flag: string | null,
    path: PathStep[],
    chain: readonly string[],
    measure: Measure,
    depth: number,
  ): unknown {
    const at = formatPath(path);
    let body: unknown = null;
    if (typeof name !== 'string') this.report(flag, at, kProblems.refNotString());
    else if (!Object.hasOwn(this.evaluators, name)) this.report(flag, at, this.unknown(name, this.names));
    else if (chain.includes(name)) this.report(flag, at, kProblems.refCycle([...chain, name]));
    else if (chain.length >= kMaxRuleDepth && !this.resolved.has(name)) this.report(flag, at, kProblems.refChainTooLong(kMaxRuleDepth));
    else body = this.evaluator(name, chain);
    const nested = typeof name === 'string' ? (this.depths.get(name) ?? 0) : 0;
    if (depth + nested > measure.depth) measure.depth = depth + nested;
    const bytes = typeof name === 'string' && this.sizes.has(name) ? this.sizes.get(name)! : scalarBytes(null);
    measure.bytes += bytes;
    measure.added += bytes - (kRefBytes + scalarBytes(name));
    return body;
  }

  /** Records a problem; the reference stays a null rule so that the walk goes on and finds the others. */
  private report(flag: string | null, path: string, message: string): null {
    this.problems.push({ flag, path, message });
    return null;
  }
}

/**
 * The names `rule` refers to with `{"$ref": name}` (string names only), walked as written, without
 * recursion: a stored rule is at most kMaxRuleDepth deep, but this also reads rules not yet checked.
 */
export function ruleRefs(rule: unknown): Set<string> {
  return new Set(ruleRefCounts(rule).keys());
}

/** How many times `rule` refers to each name (ruleRefs's walk, each occurrence counted). */
export function ruleRefCounts(rule: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  const stack: unknown[] = [rule];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === '$ref') {
      if (typeof record.$ref === 'string') counts.set(record.$ref, (counts.get(record.$ref) ?? 0) + 1);
      continue;
    }
    for (const key of keys) stack.push(record[key]);
  }
  return counts;
}

/**
 * What one `{"$ref": name}` adds to its rule resolved when `name`'s rule weighs `resolvedBytes` (its
 * compact JSON): the count RefResolver keeps against kMaxAddedRuleBytes, for one reference.
 */
export function refAddedBytes(name: string, resolvedBytes: number): number {
  return resolvedBytes - (kRefBytes + scalarBytes(name));
}
