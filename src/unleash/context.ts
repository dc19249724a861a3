// Unleash's context in Flagwire's terms: the one home of the mapping, which the client API says in
// Unleash's model (client-features.ts) and the front-end API evaluates (frontend-evaluator.ts), and
// docs/api.md (Unleash's SDKs) tells users. docs/decisions.md says why.
//
//   Unleash's context         Flagwire's
//   userId                    the targeting key (what Flagwire buckets by)
//   sessionId                 the targeting key when there is no userId: Unleash's default stickiness
//                             buckets by userId, then sessionId, as the client API's rollouts do
//   properties.cohort         the cohort, checked against the flag's cohort list
//   properties.<name>         the attribute <name> (never targetingKey, cohort or env: src/ofrep/context.ts)
//   environment               ignored: the credential names the environment
//   appName, remoteAddress,   read by no Flagwire rule
//   currentTime
//
// Without a targeting key and a cohort, a percentage rolls, as Flagwire's Evaluation API and Unleash's
// default stickiness do. The front-end API takes the context as a query (`userId=u&properties[plan]=pro`,
// as unleash-proxy-client writes it) or as a JSON body (`{"context": {...}}`, or the context itself, as
// Unleash Edge reads it); a name that is none of Unleash's fields is a property, as Unleash's own
// front-end API reads `?plan=pro`. Property values that are numbers or booleans match by their JSON text.
// A body's context is held to the bound every evaluation route applies (src/evaluation/engine/context-bounds.ts);
// a query is held to uWS's 4 KiB of request head, inside it.
import { kContextTooLarge, withinContextBounds } from '../evaluation/engine/context-bounds.js';
import type { EvalContext } from '../evaluation/engine/evaluate.js';
import type { RuleContext } from '../evaluation/engine/variants.js';
import type { UnleashFields } from './rules/constraints.js';
import { decodeFormComponent, FormPairs } from '../http/form-urlencoded.js';
import { jsonBoundsProblem } from '../http/json-bounds.js';

/** Unleash's own context fields: never properties. */
export const kUnleashFields: ReadonlySet<string> = new Set([
  'userId',
  'sessionId',
  'remoteAddress',
  'environment',
  'appName',
  'currentTime',
]);
/** The property that is Flagwire's cohort. */
export const kCohortProperty = 'cohort';
/** Never attributes in Flagwire (src/ofrep/context.ts): a rule on them is never met. */
const kNotAttributes: ReadonlySet<string> = new Set(['targetingKey', kCohortProperty, 'env']);
/** Whether a property of this name is an attribute an audience rule reads. */
export function isAttribute(name: string): boolean {
  return !kNotAttributes.has(name);
}

const kShape = 'Send {"context": {"userId": "user-1", "properties": {"plan": "beta"}}}, or the context itself.';
const kPropertyPrefix = 'properties[';
const kQuestionMark = 0x3f;

/** One request's context. Each worker reuses one instance (a parse resets it). */
export class UnleashContext implements EvalContext, RuleContext, UnleashFields {
  targetingKey: string | null = null;
  cohort: string | null = null;
  /** The credential's environment (null: a single-environment project): what a flagd rule reads as `env`. */
  env: string | null = null;
  /** Why the context cannot be read (the 400's detail), or null. */
  error: string | null = null;
  // Maps, kept and cleared: a null-prototype object per request, its names added one by one, was a
  // dictionary V8 looked up slowly (a tenth of a 5-flag front-end answer's time).
  private readonly fields = new Map<string, string>();
  private readonly properties = new Map<string, string>();
  private data: Record<string, string> | null = null;
  private readonly pairs = new FormPairs();

  /**
   * A query string as sent (the part after "?"), read as URLSearchParams reads it (unleash-proxy-client
   * writes it with one), without making one: split on "&", each name and value form-decoded where it can
   * be, and otherwise as URLSearchParams decodes it (a lone "%" kept, invalid UTF-8 as U+FFFD). The same
   * pairs, for any query without lone surrogates, which a query never holds here: it reaches the eval
   * worker as UTF-8 bytes and is read back from them (test/unleash/frontend-answer.test.ts checks the two
   * readings against each other). URLSearchParams made a third of a 5-flag front-end answer's time.
   */
  parseQuery(raw: string): boolean {
    this.reset();
    // URLSearchParams drops one leading "?".
    const pairs = this.pairs.over(raw, raw.charCodeAt(0) === kQuestionMark ? 1 : 0);
    while (pairs.next()) {
      const { start, eq, end } = pairs;
      this.param(formComponent(raw, start, eq), eq < end ? formComponent(raw, eq + 1, end) : '');
    }
    return this.settle();
  }

  private param(name: string, value: string): void {
    const property = propertyParam(name);
    if (property !== null) this.put(this.properties, property, value);
    else if (kUnleashFields.has(name)) this.put(this.fields, name, value);
    else this.put(this.properties, name, value);
  }

  /** A JSON body: `{"context": {...}}`, or the context itself; empty is an empty context. */
  parseBody(raw: string): boolean {
    this.reset();
    if (raw.trim() === '') return this.settle();
    // Scanned before JSON.parse builds it (src/http/json-bounds.ts).
    const outOfBounds = jsonBoundsProblem(raw);
    if (outOfBounds !== null) return this.fail(`${outOfBounds} ${kShape}`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      return this.fail(`The request body is not valid JSON (${(err as Error).message}). ${kShape}`);
    }
    if (!isObject(body)) return this.fail(`The request body must be a JSON object. ${kShape}`);
    const context = Object.hasOwn(body, 'context') ? body.context : body;
    if (!isObject(context)) return this.fail(`"context" must be a JSON object. ${kShape}`);
    // Before any of it is read: the bound every evaluation route applies.
    if (!withinContextBounds(context)) return this.fail(kContextTooLarge);
    for (const name in context) {
      const value = context[name];
      if (name === 'properties') {
        if (value === null || value === undefined) continue;
        if (!isObject(value)) return this.fail(`"properties" must be a JSON object of strings. ${kShape}`);
        for (const property in value) this.put(this.properties, property, textOf(value[property]));
      } else if (kUnleashFields.has(name)) this.put(this.fields, name, textOf(value));
      else this.put(this.properties, name, textOf(value));
    }
    return this.settle();
  }

  /** A state in Unleash's model reads the context as sent (its environment is the key's, where it names one). */
  readonly unleash: UnleashFields = this;

  unleashField(name: string): string | undefined {
    if (name === 'environment') return this.env ?? this.fields.get('environment');
    return this.fields.get(name);
  }

  unleashValue(name: string): string | undefined {
    return this.unleashField(name) ?? this.properties.get(name);
  }

  attribute(name: string): string | undefined {
    if (!isAttribute(name)) return undefined;
    return this.properties.get(name);
  }

  /**
   * What a flagd rule reads: targetingKey, cohort and env, then every property that is an attribute (the
   * Evaluation API's shape for the same caller, whose query's targetingKey, cohort and env are never
   * attributes: a property `targetingKey` or `env` is not the targeting key or the environment here either).
   */
  ruleData(): Readonly<Record<string, string>> {
    if (this.data !== null) return this.data;
    const data: Record<string, string> = {};
    const put = (name: string, value: string | null | undefined) => {
      if (value === null || value === undefined || Object.hasOwn(data, name)) return;
      // "__proto__" is data, as JSON.parse makes it (src/evaluation/engine/query.ts).
      if (name === '__proto__') Object.defineProperty(data, name, { value, enumerable: true, writable: true });
      else data[name] = value;
    };
    put('targetingKey', this.targetingKey);
    put('cohort', this.cohort);
    put('env', this.env);
    for (const [name, value] of this.properties) if (isAttribute(name)) put(name, value);
    this.data = data;
    return data;
  }

  private reset(): void {
    this.targetingKey = null;
    this.cohort = null;
    this.env = null;
    this.error = null;
    this.fields.clear();
    this.properties.clear();
    this.data = null;
  }

  /** The first of a repeated name counts; an empty value is absent; a value that is no text is dropped. */
  private put(into: Map<string, string>, name: string, value: string | undefined): void {
    if (value === undefined || value === '' || into.has(name)) return;
    into.set(name, value);
  }

  private settle(): boolean {
    this.targetingKey = this.fields.get('userId') ?? this.fields.get('sessionId') ?? null;
    this.cohort = this.properties.get(kCohortProperty) ?? null;
    return true;
  }

  private fail(detail: string): false {
    this.error = detail;
    return false;
  }
}

/**
 * The property `properties[<name>]` names, or null: the name between the brackets, which holds no line
 * terminator (as /^properties\[(.*)\]$/ reads it, without the match's array on every parameter).
 */
function propertyParam(name: string): string | null {
  const last = name.length - 1;
  if (last < kPropertyPrefix.length || name.charCodeAt(last) !== 0x5d || !name.startsWith(kPropertyPrefix)) return null;
  for (let i = kPropertyPrefix.length; i < last; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) return null;
  }
  return name.slice(kPropertyPrefix.length, last);
}

/** A query's name or value as URLSearchParams decodes it: the strict decoding where it can, else URLSearchParams's own. */
function formComponent(raw: string, start: number, end: number): string {
  // "x=" first: the component is then the value of the only pair (a value may hold "="; neither holds "&").
  return decodeFormComponent(raw, start, end) ?? new URLSearchParams(`x=${raw.slice(start, end)}`).get('x')!;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A context value as text: strings as they are, numbers and booleans by their JSON text; nothing else is one. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
