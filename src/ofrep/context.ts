// An OFREP request body, parsed into what the evaluation rules read (the EvalContext of evaluate.ts):
// `{"context": {"targetingKey", "cohort", "env", ...attributes}}`.
//
// Decisions (docs/decisions.md: OFREP): an empty body is `{}`; the body is JSON whatever its Content-Type says (every
// OFREP provider sends JSON); attribute values that are strings match as they are, numbers and booleans
// by their JSON text (`42`, `true`); null, objects and arrays are never attributes (an OpenFeature context
// may carry structures, and refusing the whole evaluation for one would be hostile); an empty
// targetingKey, cohort or env counts as absent, as on the Evaluation API.
//
// Bounded (issue 42, docs/operations.md: Evaluation work): a context past the bound every evaluation
// route applies (src/evaluation/engine/context-bounds.ts) is refused with INVALID_CONTEXT before any flag is
// evaluated. What a rule may then build from it is bounded by src/targeting/work-budget.ts. (The body
// itself is at most what a context within the bound takes, kMaxContextBodyBytes, refused before it is
// read, and within the JSON bounds, src/http/json-bounds.ts, before it is parsed.)
import type { UnleashFields } from '../unleash/rules/constraints.js';
import { FlatUnleashFields } from '../unleash/rules/fields.js';
import { kContextTooLarge, withinContextBounds } from '../evaluation/engine/context-bounds.js';
import type { EvalContext } from '../evaluation/engine/evaluate.js';
import type { RuleContext } from '../evaluation/engine/variants.js';
import { jsonBoundsProblem } from '../http/json-bounds.js';
import { compileValidator } from '../model/validation.js';
import { OfrepContext as OfrepContextShape, OfrepEvaluationRequest, type OfrepErrorCode } from '../model/ofrep-schemas.js';

const kRequestCheck = compileValidator(OfrepEvaluationRequest, { quoteKeys: false });
const kContextCheck = compileValidator(OfrepContextShape, { quoteKeys: false });
const kEmptyContext: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const kShape = 'Send a JSON object such as {"context": {"targetingKey": "user-1", "plan": "beta"}}.';

/** One parsed body. Each worker reuses one instance (parse() resets it). */
export class OfrepContext implements EvalContext, RuleContext {
  cohort: string | null = null;
  targetingKey: string | null = null;
  env: string | null = null;
  /** The context as a state in Unleash's model reads it (src/unleash/rules/fields.ts). */
  readonly unleash: UnleashFields = new FlatUnleashFields(this);
  /** Set when parse() returned false. */
  errorCode: OfrepErrorCode = 'GENERAL';
  errorDetails = '';
  private attrs: Readonly<Record<string, unknown>> = kEmptyContext;

  parse(raw: string): boolean {
    this.cohort = null;
    this.targetingKey = null;
    this.env = null;
    this.attrs = kEmptyContext;
    if (raw.length === 0 || raw.trim() === '') return true;
    // Scanned before JSON.parse builds it: the bounds below walk only what the body's own bounds let through.
    const outOfBounds = jsonBoundsProblem(raw);
    if (outOfBounds !== null) return this.fail('PARSE_ERROR', `${outOfBounds} ${kShape}`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      return this.fail('PARSE_ERROR', `The request body is not valid JSON (${(err as Error).message}). ${kShape}`);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return this.fail(
        'PARSE_ERROR',
        `The request body must be a JSON object, not ${body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`}. ${kShape}`,
      );
    }
    const problems = kRequestCheck.problems(body);
    if (problems.length > 0) return this.fail('INVALID_CONTEXT', `${problems.join('; ')}. ${kShape}`);
    const context = (body as { context?: Record<string, unknown> }).context;
    if (context === undefined) return true;
    return this.take(context);
  }

  /**
   * An evaluation context given as an object (the Flagwire OpenFeature provider's, src/provider): the same
   * checks and attribute rules as a request body's `context`. False with errorCode and errorDetails set.
   */
  fill(context: Readonly<Record<string, unknown>>): boolean {
    this.cohort = null;
    this.targetingKey = null;
    this.env = null;
    this.attrs = kEmptyContext;
    if (!kContextCheck.check(context)) {
      return this.fail('INVALID_CONTEXT', `${kRequestCheck.problems({ context }).join('; ')}. ${kShape}`);
    }
    return this.take(context);
  }

  /** Takes a context of the right shape, within the limits. */
  private take(context: Readonly<Record<string, unknown>>): boolean {
    if (!withinContextBounds(context)) return this.fail('INVALID_CONTEXT', kContextTooLarge);
    this.attrs = context;
    this.targetingKey = nonEmpty(context.targetingKey);
    this.cohort = nonEmpty(context.cohort);
    this.env = nonEmpty(context.env);
    return true;
  }

  attribute(name: string): string | undefined {
    if (name === 'targetingKey' || name === 'cohort' || name === 'env') return undefined;
    const attrs = this.attrs;
    // Own keys only: "constructor" or "toString" must not find Object.prototype's members.
    if (!Object.hasOwn(attrs, name)) return undefined;
    const value = attrs[name];
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return undefined;
  }

  /** What a flagd rule reads: the request's `context` as sent, every key and value (docs/design.md §2b). */
  ruleData(): Readonly<Record<string, unknown>> {
    return this.attrs;
  }

  private fail(code: OfrepErrorCode, details: string): false {
    this.errorCode = code;
    this.errorDetails = details;
    return false;
  }
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
