// The one bound on an evaluation context, whatever route brings it (issue 42 for OFREP, issue 96 item 5
// for the rest; docs/operations.md: Evaluation work): OFREP's body `context` (src/ofrep/context.ts) and
// the Flagwire provider's, and Unleash's front-end context (src/unleash/context.ts), by query or body.
// A context past it is refused before any flag is evaluated, in the route's own error shape, and a body
// too large to hold a context within it before it is read (kMaxContextBodyBytes). The
// Evaluation API's context is its query string, which uWS holds to 4 KiB of request head (431 past
// it), far inside the bound; so is a front-end GET's. Unleash's client API and flagd's sync take no
// context: their SDKs evaluate locally.
//
// Why one bound and checked first: a 900 KB `userId` on the front-end API (which had none) held an eval
// worker for seconds, past the batcher's stuck-batch timeout, and the other requests of its batch
// (other projects' among them) were answered 500 with it.

/** Characters of the context's keys and strings at most (UTF-16 code units): 64 Ki, far above any real context. */
export const kMaxContextChars = 65_536;
/** Keys of objects and items of arrays in the whole context at most. */
export const kMaxContextValues = 10_000;
/** Objects and arrays nested in the context at most (the context itself is level 1). */
export const kMaxContextDepth = 16;
/**
 * Bytes of an evaluation request's body at most (OFREP's, the front-end API's POST): past it the body is
 * refused 413 on the front-end thread, from its Content-Length, before anything of it is read or queued
 * (src/evaluation/engine/queued-body.ts). It is the most a body holding a context within the bound takes
 * written compactly, as JSON.stringify writes it: each character of a key or string at most 6 bytes (a
 * control character or lone surrogate is written `\uXXXX`), each key or item at most 32 bytes more (its
 * quotes, colon and comma, and a number's text, at most 24 characters), and 4 KiB for the body's other
 * fields. A larger body cannot carry a context the bound lets through: reading it on the front-end
 * thread and parsing it on a worker would only spend time every project's evaluations share.
 */
export const kMaxContextBodyBytes = kMaxContextChars * 6 + kMaxContextValues * 32 + 4096;
/** Why a context is refused: every route's detail says the same. */
export const kContextTooLarge =
  `The context holds more than ${kMaxContextChars} characters of keys and strings, more than ${kMaxContextValues} keys ` +
  `and items, or is nested deeper than ${kMaxContextDepth} levels: send only the attributes your flags read ` +
  '(docs/operations.md: Evaluation work).';

// What the walk of one context has counted (module state: a worker reads one context at a time).
let values = 0;
let chars = 0;

/** Whether `context` (a JSON object) is within the bound; walked no further than it allows, and allocating nothing. */
export function withinContextBounds(context: object): boolean {
  values = 0;
  chars = 0;
  return walk(context, 1);
}

function walk(value: object, depth: number): boolean {
  if (depth > kMaxContextDepth) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!visit(value[i], depth)) return false;
    return true;
  }
  // for-in over JSON.parse's plain objects: their own keys, and no array of them made per request.
  for (const key in value) {
    chars += key.length;
    if (!visit((value as Record<string, unknown>)[key], depth)) return false;
  }
  return true;
}

/** Counts one key's value or one item (at `depth`, that of what holds it), and what it holds. */
function visit(item: unknown, depth: number): boolean {
  if (++values > kMaxContextValues) return false;
  if (typeof item === 'string') chars += item.length;
  else if (item !== null && typeof item === 'object') return walk(item, depth + 1);
  return chars <= kMaxContextChars;
}
