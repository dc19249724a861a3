// SCIM filters (RFC 7644 §3.4.2.2): parsed once per request into a tree, then tested against each
// resource as the API shows it. Attribute names are matched without case (RFC 7643 §2.1); string values
// without case too, except those RFC 7643 makes caseExact (id, externalId, meta.version). A filter is
// bounded in length and depth, so no client's filter costs more than a walk of its own text.
import { scimRefusal } from './errors.js';

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
type Scalar = string | number | boolean | null;

export type Filter =
  | { readonly op: 'and' | 'or'; readonly left: Filter; readonly right: Filter }
  | { readonly op: 'not'; readonly filter: Filter }
  | { readonly op: 'pr'; readonly path: readonly string[] }
  | { readonly op: CompareOp; readonly path: readonly string[]; readonly value: Scalar }
  /** `emails[type eq "work"]`: some value of the path matches the inner filter. */
  | { readonly op: 'has'; readonly path: readonly string[]; readonly filter: Filter };

export const kMaxFilterLength = 2000;
const kMaxDepth = 32;
const kCompareOps = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);
const kCaseExact = new Set(['id', 'externalid', 'meta.version']);
const kCoreSchemas = ['urn:ietf:params:scim:schemas:core:2.0:user:', 'urn:ietf:params:scim:schemas:core:2.0:group:'];

type Token = { kind: 'word' | 'string' | 'punct'; text: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
    } else if ('()[]'.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw invalid('a string is not closed');
      tokens.push({ kind: 'string', text: JSON.parse(text.slice(i, j + 1)) as string });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !' \t()[]"'.includes(text[j]!)) j++;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

function invalid(why: string): Error {
  return scimRefusal('invalidFilter', `The filter is not one this service reads: ${why} (RFC 7644 §3.4.2.2).`);
}

/** The filter's tree; `attributes` are the resource's top-level attribute names (lower case) a path may start with. */
export function parseFilter(text: string, attributes: ReadonlySet<string>): Filter {
  if (text.length > kMaxFilterLength) throw invalid(`it is over ${kMaxFilterLength} characters`);
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch (err) {
    throw err instanceof SyntaxError ? invalid('a string has a bad escape') : err;
  }
  let at = 0;
  // Inside `[...]` the paths are the complex value's sub-attributes: any name.
  let allowed: ReadonlySet<string> | null = attributes;
  const peekWord = () => (tokens[at]?.kind === 'word' ? tokens[at]!.text.toLowerCase() : null);
  const expect = (punct: string) => {
    if (tokens[at]?.kind !== 'punct' || tokens[at]!.text !== punct) throw invalid(`"${punct}" expected`);
    at++;
  };
  const path = (raw: string): string[] => {
    let name = raw.toLowerCase();
    for (const schema of kCoreSchemas) if (name.startsWith(schema)) name = name.slice(schema.length);
    const parts = name.split('.');
    if (parts.some((p) => !/^[a-z$][a-z0-9_$-]*$/.test(p)) || (allowed !== null && !allowed.has(parts[0]!))) {
      throw invalid(`"${raw}" is not an attribute that can be filtered on`);
    }
    return parts;
  };
  const scalar = (): Scalar => {
    const token = tokens[at++];
    if (token === undefined) throw invalid('a value is missing');
    if (token.kind === 'string') return token.text;
    if (token.kind === 'word') {
      const word = token.text.toLowerCase();
      if (word === 'true' || word === 'false') return word === 'true';
      if (word === 'null') return null;
      if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(token.text)) return Number(token.text);
    }
    throw invalid(`"${token.text}" is not a value (strings are quoted)`);
  };
  const expression = (depth: number): Filter => {
    if (depth > kMaxDepth) throw invalid(`it nests deeper than ${kMaxDepth}`);
    let left = term(depth);
    for (;;) {
      const word = peekWord();
      if (word !== 'and' && word !== 'or') return left;
      at++;
      const right = term(depth + 1);
      // `and` binds tighter than `or` (RFC 7644 Table 3's precedence).
      if (word === 'and' || left.op !== 'or') left = { op: word, left, right };
      else left = { op: 'or', left: left.left, right: { op: 'and', left: left.right, right } };
    }
  };
  const term = (depth: number): Filter => {
    if (depth > kMaxDepth) throw invalid(`it nests deeper than ${kMaxDepth}`);
    const token = tokens[at];
    if (token === undefined) throw invalid('it ends where an expression was expected');
    if (token.kind === 'punct' && token.text === '(') {
      at++;
      const inner = expression(depth + 1);
      expect(')');
      return inner;
    }
    if (peekWord() === 'not') {
      at++;
      expect('(');
      const inner = expression(depth + 1);
      expect(')');
      return { op: 'not', filter: inner };
    }
    if (token.kind !== 'word') throw invalid(`"${token.text}" where an attribute was expected`);
    at++;
    const attr = path(token.text);
    if (tokens[at]?.kind === 'punct' && tokens[at]!.text === '[') {
      at++;
      if (allowed === null) throw invalid('"[" inside "[...]"');
      allowed = null;
      const inner = expression(depth + 1);
      allowed = attributes;
      expect(']');
      return { op: 'has', path: attr, filter: inner };
    }
    const op = peekWord();
    if (op === 'pr') {
      at++;
      return { op: 'pr', path: attr };
    }
    if (op === null || !kCompareOps.has(op))
      throw invalid(`an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr) must follow ${token.text}`);
    at++;
    return { op: op as CompareOp, path: attr, value: scalar() };
  };
  const filter = expression(0);
  if (at !== tokens.length) throw invalid(`"${tokens[at]!.text}" was not expected there`);
  return filter;
}

/** Whether the resource (as the API shows it) matches. */
export function matches(filter: Filter, resource: unknown, prefix = ''): boolean {
  switch (filter.op) {
    case 'and':
      return matches(filter.left, resource, prefix) && matches(filter.right, resource, prefix);
    case 'or':
      return matches(filter.left, resource, prefix) || matches(filter.right, resource, prefix);
    case 'not':
      return !matches(filter.filter, resource, prefix);
    case 'has':
      return valuesAt(resource, filter.path, false).some((v) => matches(filter.filter, v, `${prefix}${filter.path.join('.')}.`));
    case 'pr':
      return valuesAt(resource, filter.path, true).some((v) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0));
    default: {
      const exact = kCaseExact.has(prefix + filter.path.join('.'));
      return valuesAt(resource, filter.path, true).some((v) => compare(filter.op as CompareOp, v, filter.value, exact));
    }
  }
}

/** The values at a path, arrays flattened; a complex value stands for its `value` sub-attribute where one is wanted (RFC 7644 §3.4.2.2). */
function valuesAt(resource: unknown, path: readonly string[], scalars: boolean): unknown[] {
  let values: unknown[] = [resource];
  for (const part of path) {
    values = values.flatMap((v) => {
      if (v === null || typeof v !== 'object') return [];
      const key = Object.keys(v).find((k) => k.toLowerCase() === part);
      const found = key === undefined ? undefined : (v as Record<string, unknown>)[key];
      return found === undefined ? [] : Array.isArray(found) ? found : [found];
    });
  }
  if (!scalars) return values;
  return values.map((v) => (v !== null && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v));
}

function compare(op: CompareOp, actual: unknown, wanted: Scalar, exact: boolean): boolean {
  if (typeof actual === 'string' && typeof wanted === 'string') {
    const a = exact ? actual : actual.toLowerCase();
    const b = exact ? wanted : wanted.toLowerCase();
    switch (op) {
      case 'eq':
        return a === b;
      case 'ne':
        return a !== b;
      case 'co':
        return a.includes(b);
      case 'sw':
        return a.startsWith(b);
      case 'ew':
        return a.endsWith(b);
      case 'gt':
        return a > b;
      case 'ge':
        return a >= b;
      case 'lt':
        return a < b;
      case 'le':
        return a <= b;
    }
  }
  if (typeof actual === 'number' && typeof wanted === 'number') {
    if (op === 'gt') return actual > wanted;
    if (op === 'ge') return actual >= wanted;
    if (op === 'lt') return actual < wanted;
    if (op === 'le') return actual <= wanted;
  }
  if (op === 'eq') return actual === wanted;
  if (op === 'ne') return actual !== wanted;
  return false;
}
