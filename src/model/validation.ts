// Turns a compiled TypeBox check into the spec's problem texts: every problem, each naming its path.
import { type CompiledCheck, compiledOnUse, type Static, type TSchema, type TUnion, type ValueError, ValueErrorType } from '../typebox.js';
import { schemaErrorText } from './schemas.js';

export interface Validator<T extends TSchema> {
  /** Problems in the spec's wording; empty when `value` is valid. */
  problems(value: unknown): string[];
  check(value: unknown): value is Static<T>;
}

export interface ValidatorOptions {
  /** PATCH quotes keys (`"trafficPercentage" must be ...`); create names dotted paths bare. */
  quoteKeys: boolean;
}

export function compileValidator<T extends TSchema>(schema: T, options: ValidatorOptions): Validator<T> {
  const checker: CompiledCheck<T> = compiledOnUse(schema);
  const name = (path: string) => (options.quoteKeys ? `"${path}"` : path);
  return {
    check: (value): value is Static<T> => checker.Check(value),
    problems(value) {
      if (checker.Check(value)) return [];
      const seen = new Set<string>();
      const out: string[] = [];
      // Errors() is lazy and costs a walk of the value: only called once Check has failed.
      for (const error of chosenErrors(checker.Errors(value))) {
        const { path, leaf } = readablePath(error.path, value);
        if (seen.has(path)) continue;
        seen.add(path);
        if (error.type === ValueErrorType.ObjectAdditionalProperties) {
          out.push(`unknown field "${path}"`);
        } else if (error.type === ValueErrorType.ObjectRequiredProperty) {
          out.push(`${name(path)} is required`);
        } else if (leaf === null) {
          // Keys that accept null (audienceId) never fail with null, so null here is always refused.
          out.push(`${name(path)} cannot be null`);
        } else {
          out.push(`${name(path)} ${schemaErrorText(error.schema) ?? lowerFirst(error.message)}`);
        }
      }
      return out;
    },
  };
}

/**
 * The errors, a union of objects' error replaced by those of the one object it was meant to be: the only
 * branch whose required keys the value has (a rollout step with `trafficPercentage` is a percentage step,
 * and its problem is that step's: `steps[0].trafficPercentage must be ...`). When no branch or several
 * have their keys, the union's own error stands (its x-error says which shapes it takes).
 */
function* chosenErrors(errors: Iterable<ValueError>): Iterable<ValueError> {
  for (const error of errors) {
    const branch = error.type === ValueErrorType.Union ? objectBranchErrors(error) : null;
    if (branch === null) yield error;
    else yield* chosenErrors(branch);
  }
}

function objectBranchErrors(error: ValueError): ValueError[] | null {
  const branches = (error.schema as TUnion).anyOf;
  if (!branches.every((b) => b.type === 'object')) return null;
  const keysMissing = (e: ValueError) => e.type === ValueErrorType.ObjectRequiredProperty && e.path.lastIndexOf('/') === error.path.length;
  const fitting = error.errors.map((branch) => [...branch]).filter((list) => !list.some(keysMissing));
  return fitting.length === 1 ? fitting[0]! : null;
}

/** `/environments/prod/cohorts/2` -> `environments.prod.cohorts[2]`, and the value found there. */
function readablePath(pointer: string, root: unknown): { path: string; leaf: unknown } {
  let path = '';
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path = joinPath(path, segment, Array.isArray(node));
    if (Array.isArray(node)) {
      node = node[Number(segment)];
    } else {
      node =
        node !== null && typeof node === 'object' && Object.hasOwn(node, segment) ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return { path, leaf: node };
}

/** One step down a readable path: `[2]` into an array, `.key` into an object (bare at the root). */
function joinPath(path: string, segment: string, index: boolean): string {
  if (index) return `${path}[${segment}]`;
  return path === '' ? segment : `${path}.${segment}`;
}

/** A node of the walk in `unicodeProblems`: the path is only built for a string that is reported. */
interface Visit {
  value: unknown;
  parent: Visit | null;
  segment: string;
  index: boolean;
}

/** Listed at most: a 1 MiB body of bad strings must not get a detail many times its size. */
const kMaxUnicodeProblems = 10;

// A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag:
// the pattern sees UTF-16 code units). String#isWellFormed says the same, but is not in this
// project's ES2022 library types.
const kLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const kLoneSurrogates = new RegExp(kLoneSurrogate.source, 'g');

/**
 * The one rule for every string Flagwire stores (names, descriptions, tags, cohorts, audience rules,
 * environment names) and for the keys around them: it must be valid Unicode, so that what is stored
 * is exactly what was sent and reads back the same (I-JSON, RFC 7493 §2.1). A JavaScript string is
 * not, when it holds a lone surrogate (a JSON body can write one as `\ud800`); the store's UTF-8
 * would keep it as three U+FFFD, so distinct names would collide and a repeated patch would never
 * be a no-op. Returns one problem per offending string or key, each naming its path as the schema
 * problems do; empty when every string is well-formed. Walks arrays and plain objects without
 * recursion (a parsed body may nest arbitrarily deep); other objects (the bytes of a received body)
 * are not text and are skipped.
 */
export function unicodeProblems(root: unknown, options: ValidatorOptions): string[] {
  const problems: string[] = [];
  let more = 0;
  const report = (what: string, visit: Visit, text: string) => {
    if (problems.length === kMaxUnicodeProblems) {
      more++;
      return;
    }
    const path = visitPath(visit);
    problems.push(
      `${what}${options.quoteKeys ? `"${path}"` : path} is not valid Unicode: it has a lone surrogate (${escapes(text)}); send only well-formed text (I-JSON, RFC 7493)`,
    );
  };
  const stack: Visit[] = [{ value: root, parent: null, segment: '', index: false }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value === 'string') {
      if (kLoneSurrogate.test(value)) report('', visit, value);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: visit, segment: String(i), index: true });
    } else if (isPlainObject(value)) {
      const keys = Object.keys(value);
      for (const key of keys) {
        if (kLoneSurrogate.test(key)) report('the key ', { value: null, parent: visit, segment: key, index: false }, key);
      }
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: value[keys[i]!], parent: visit, segment: keys[i]!, index: false });
    }
  }
  if (more > 0) problems.push(`and ${more} more string${more === 1 ? '' : 's'} that are not valid Unicode`);
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Longer paths are cut (a body may nest as deep as its size allows); the start says where to look. */
const kMaxPathLength = 200;

/** The readable path of a visit; a lone surrogate in a key is written as its escape, so the text is well-formed. */
function visitPath(visit: Visit): string {
  const steps: Visit[] = [];
  for (let v: Visit | null = visit; v !== null && v.parent !== null; v = v.parent) steps.push(v);
  let path = '';
  for (let i = steps.length - 1; i >= 0 && path.length <= kMaxPathLength; i--) {
    path = joinPath(path, steps[i]!.segment.replace(kLoneSurrogates, escapeUnit), steps[i]!.index);
  }
  return path.length > kMaxPathLength ? `${path.slice(0, kMaxPathLength)}...` : path;
}

/** `\uD800, \uDC00`: the distinct lone surrogates of `text`, written as the escapes that send them. */
function escapes(text: string): string {
  return [...new Set(text.match(kLoneSurrogates))].map(escapeUnit).join(', ');
}

function escapeUnit(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).toUpperCase()}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
