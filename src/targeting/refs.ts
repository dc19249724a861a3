// Shared rules: `{"$ref": "name"}` anywhere in a rule stands for `$evaluators.name`. References are
// replaced by the rules they name, evaluators referring to evaluators included, whatever their order in
// the document; a reference to no evaluator, or a cycle, is a problem. (flagd-core replaces the text
// `{"$ref":"name"}` one evaluator after the other, so there an evaluator that refers to one declared
// before it stays unresolved and fails its flags: the only difference, and in our favour.)
import { type DefinitionProblem, formatPath, kProblems, type PathStep } from './problems.js';

export class RefResolver {
  /** Evaluators already resolved, by name (a reference used by many flags is resolved once). */
  private readonly resolved = new Map<string, unknown>();
  private readonly names: string[];

  constructor(
    private readonly evaluators: Readonly<Record<string, unknown>>,
    private readonly problems: DefinitionProblem[],
  ) {
    this.names = Object.keys(evaluators);
  }

  /** Every evaluator, resolved (their own problems reported with `$evaluators.NAME` paths). */
  resolveAll(): void {
    for (const name of this.names) this.evaluator(name, []);
  }

  /** An evaluator's rule with its own references replaced. */
  resolvedEvaluator(name: string): unknown {
    return this.evaluator(name, []);
  }

  /** `rule` with every reference replaced; `path` is where `rule` sits, for problems in `flag`. */
  resolve(rule: unknown, flag: string | null, path: PathStep[]): unknown {
    return this.walk(rule, flag, path, []);
  }

  private evaluator(name: string, chain: readonly string[]): unknown {
    const done = this.resolved.get(name);
    if (done !== undefined) return done;
    const body = this.walk(this.evaluators[name], null, ['$evaluators', name], [...chain, name]);
    this.resolved.set(name, body);
    return body;
  }

  private walk(node: unknown, flag: string | null, path: PathStep[], chain: readonly string[]): unknown {
    if (Array.isArray(node)) return node.map((item, i) => this.walk(item, flag, [...path, i], chain));
    if (node === null || typeof node !== 'object') return node;
    const keys = Object.keys(node);
    const object = node as Record<string, unknown>;
    if (keys.length === 1 && keys[0] === '$ref') {
      const name = object.$ref;
      const at = formatPath(path);
      if (typeof name !== 'string') return this.report(flag, at, kProblems.refNotString());
      if (!Object.hasOwn(this.evaluators, name)) return this.report(flag, at, kProblems.unknownEvaluator(name, this.names));
      if (chain.includes(name)) return this.report(flag, at, kProblems.refCycle([...chain, name]));
      return this.evaluator(name, chain);
    }
    const out: Record<string, unknown> = {};
    for (const key of keys) out[key] = this.walk(object[key], flag, [...path, key], chain);
    return out;
  }

  /** Records a problem; the reference stays a null rule so that the walk goes on and finds the others. */
  private report(flag: string | null, path: string, message: string): null {
    this.problems.push({ flag, path, message });
    return null;
  }
}
