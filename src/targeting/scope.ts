// What a compiled rule reads: the evaluation context and flagd's own properties. One scope per thread is
// filled before each evaluation and reused (evaluate.ts), so evaluating allocates no context object;
// flagd-core copies the context into a new object with `$flagd` added on every evaluation instead.
import { chargeList } from './work-budget.js';

/** `$flagd` in the context: the flag being evaluated and the evaluation's time in whole seconds. */
export interface FlagdProperties {
  flagKey: string;
  timestamp: number;
}

export interface Scope {
  /** The evaluation context as given (targetingKey is one of its attributes). */
  data: Readonly<Record<string, unknown>>;
  /** Shadows any `$flagd` attribute of the context, as in flagd. */
  readonly flagd: FlagdProperties;
  /**
   * The `prev` variable of json-logic-engine's generated function, which its compiled `var`, `and`,
   * `or`, `missing_some` and comparisons all assign: a comparison's right operand that assigns it
   * changes what the comparison coerces against (compile-rule.ts, comparison). Kept to answer as it does.
   */
  prev: unknown;
}

export function newScope(): Scope {
  return { data: {}, flagd: { flagKey: '', timestamp: 0 }, prev: undefined };
}

/** A top-level name of the context as rules see it: `$flagd` is flagd's, the rest the caller's. */
export function rootValue(scope: Scope, name: string): unknown {
  return name === '$flagd' ? scope.flagd : scope.data[name];
}

/** The whole context as a rule sees it (`{"var": ""}`): a copy, made only for that rare rule. */
export function wholeContext(scope: Scope): Record<string, unknown> {
  // A copy as long as the context, made each time the rule reads it: charged (work-budget.ts).
  chargeList(Object.keys(scope.data).length);
  return { ...scope.data, $flagd: { ...scope.flagd } };
}
