// The Evaluation API's query string: `cohort`, `env`, `targetingKey`, and every other parameter as an
// attribute for audience matching (spec: GET /v1/flags/{flag_id}; the three are never attributes).
//
// Decoding is application/x-www-form-urlencoded, as URLSearchParams and HTML forms write it: "+" is a
// space and %XX escapes are UTF-8 bytes. A parameter that cannot be decoded (a malformed escape such as
// "%zz" or a lone "%", or escapes that are not valid UTF-8) makes the request a 400 whose detail says how
// to encode it (spec: Evaluation API errors, 400). That holds for every parameter, not only `cohort`:
// a silently mis-decoded targetingKey or attribute would give a wrong answer instead of an error.
// `cohort` is stricter: the spec names an unencoded "+" as the usual cause of its 400, because cohort
// ids are often e-mail addresses ("bob+beta@example.com") whose "+" would silently become a space and
// miss the cohort list. So a literal "+" in `cohort` is refused; a space must be sent as %20.
// When a parameter repeats, the first occurrence counts. An empty `cohort`, `targetingKey` or `env` is
// treated as absent.
import type { UnleashFields } from '../../unleash/rules/constraints.js';
import { FlatUnleashFields } from '../../unleash/rules/fields.js';
import { decodeFormComponent, FormPairs } from '../../http/form-urlencoded.js';
import type { EvalContext } from './evaluate.js';
import type { RuleContext } from './variants.js';

/**
 * The parameters that are fields of the request, never attributes (spec: GET /v1/flags/{flag_id}):
 * parse() tells them apart by direct compares (the hot path); the web console's playground refuses them
 * as attribute names from this list.
 */
export const kContextFields: ReadonlySet<string> = new Set(['targetingKey', 'cohort', 'env']);

/**
 * One parsed query string. Each eval worker reuses one instance for every request (parse() resets it),
 * so a request costs the decoded strings and nothing else: no URLSearchParams, no Map, no per-request object.
 */
export class EvalQuery implements EvalContext, RuleContext {
  cohort: string | null = null;
  targetingKey: string | null = null;
  env: string | null = null;
  /** The context as a state in Unleash's model reads it (src/unleash/rules/fields.ts). */
  readonly unleash: UnleashFields = new FlatUnleashFields(this);
  /** Why the query cannot be decoded (the 400 detail), or null. */
  error: string | null = null;
  // Attributes as two parallel arrays; queries are short, so a scan beats building a Map.
  private readonly names: string[] = [];
  private readonly values: string[] = [];
  private count = 0;
  /** ruleData()'s object for this query, once built. */
  private data: Record<string, string> | null = null;
  private readonly pairs = new FormPairs();

  /** Parses `raw` (the part after "?", undecoded); false when it cannot be decoded (see `error`). */
  parse(raw: string): boolean {
    this.cohort = null;
    this.targetingKey = null;
    this.env = null;
    this.error = null;
    this.count = 0;
    this.data = null;
    let seenCohort = false;
    let seenKey = false;
    let seenEnv = false;
    // Most queries hold no escape and no "+": then every name and value is its slice as sent, and the
    // three fields are told apart in place, without a string for their names (the hot path: one scan
    // of the query for each of the two characters, instead of one per name and value).
    const plain = raw.indexOf('%') === -1 && raw.indexOf('+') === -1;
    const pairs = this.pairs.over(raw, 0);
    while (pairs.next()) {
      const { start, eq, end: amp } = pairs;
      let name: string | null = null;
      let field: Field;
      let value: string | null;
      if (plain) {
        field = fieldAt(raw, start, eq);
        value = eq < amp ? raw.slice(eq + 1, amp) : '';
      } else {
        name = decodeFormComponent(raw, start, eq);
        if (name === null) return this.fail(describeFailure(null, raw.slice(start, eq)));
        field = fieldAt(name, 0, name.length);
        value = eq < amp ? decodeFormComponent(raw, eq + 1, amp) : '';
        if (value === null) return this.fail(describeFailure(name, raw.slice(eq + 1, amp)));
        if (field === kFieldCohort && value.length > 0 && raw.lastIndexOf('+', amp - 1) > eq) return this.fail(kCohortPlusDetail);
      }
      if (field === kFieldCohort) {
        if (!seenCohort) this.cohort = value === '' ? null : value;
        seenCohort = true;
      } else if (field === kFieldTargetingKey) {
        if (!seenKey) this.targetingKey = value === '' ? null : value;
        seenKey = true;
      } else if (field === kFieldEnv) {
        if (!seenEnv) this.env = value === '' ? null : value;
        seenEnv = true;
      } else {
        this.names[this.count] = name ?? raw.slice(start, eq);
        this.values[this.count] = value;
        this.count++;
      }
    }
    return true;
  }

  attribute(name: string): string | undefined {
    for (let i = 0; i < this.count; i++) if (this.names[i] === name) return this.values[i];
    return undefined;
  }

  /**
   * The context a flagd rule reads (docs/design.md §2b): every parameter of the query as a string, the
   * first of a repeated name, `targetingKey`, `cohort` and `env` included. Built for the first rule
   * that runs on this request, then reused by the others (the project route runs one per flag).
   */
  ruleData(): Readonly<Record<string, string>> {
    if (this.data !== null) return this.data;
    const data: Record<string, string> = {};
    const put = (name: string, value: string | null) => {
      if (value === null || Object.hasOwn(data, name)) return;
      // "__proto__" is data, as JSON.parse makes it: defined, since assigning it would set the
      // prototype. Only that name: an object built by defineProperty alone is far slower to read.
      if (name === '__proto__') Object.defineProperty(data, name, { value, enumerable: true, writable: true });
      else data[name] = value;
    };
    put('targetingKey', this.targetingKey);
    put('cohort', this.cohort);
    put('env', this.env);
    for (let i = 0; i < this.count; i++) put(this.names[i]!, this.values[i]!);
    this.data = data;
    return data;
  }

  private fail(detail: string): false {
    this.error = detail;
    return false;
  }
}

// Which of the three fields a parameter's name is, or none (an attribute): numbers, so the hot path
// compares integers once the name is known.
const kFieldAttribute = 0;
const kFieldCohort = 1;
const kFieldTargetingKey = 2;
const kFieldEnv = 3;
type Field = typeof kFieldAttribute | typeof kFieldCohort | typeof kFieldTargetingKey | typeof kFieldEnv;

/** The field `raw[start..end)` names (a name as sent, or a decoded one whole), without slicing it out. */
function fieldAt(raw: string, start: number, end: number): Field {
  switch (end - start) {
    case 12:
      return raw.startsWith('targetingKey', start) ? kFieldTargetingKey : kFieldAttribute;
    case 6:
      return raw.startsWith('cohort', start) ? kFieldCohort : kFieldAttribute;
    case 3:
      return raw.startsWith('env', start) ? kFieldEnv : kFieldAttribute;
    default:
      return kFieldAttribute;
  }
}

const kMalformedEscape = /%(?![0-9A-Fa-f]{2})/;

const kCohortPlusDetail =
  'The "cohort" query parameter holds an unencoded "+", which cannot be told apart from an ' +
  'encoded space. URL-encode the cohort value (for example with encodeURIComponent): a literal "+" must be sent ' +
  'as %2B, a space as %20, and a literal "%" as %25.';

function describeFailure(name: string | null, raw: string): string {
  const what = name === null ? `The query parameter name "${raw}"` : `The "${name}" query parameter`;
  const why = kMalformedEscape.test(raw) ? 'has a "%" that does not start a valid %XX escape' : 'has %XX escapes that are not valid UTF-8';
  return (
    `${what} cannot be decoded: it ${why}. URL-encode every query value (for example with encodeURIComponent): ` +
    'a literal "%" must be sent as %25 and a literal "+" as %2B (an unencoded "+" means a space), and ' +
    'non-ASCII text as its UTF-8 bytes, each as %XX.'
  );
}
