// Bounds on a request's JSON, checked in one pass over its text before JSON.parse builds anything: how
// deep arrays and objects nest, and how many elements it holds. JSON.parse builds whatever it is given,
// and what it built may then be walked, checked, or cloned to another thread: a gzip body of nothing but
// `[[[[` held an events thread for seconds and took hundreds of MiB, and a deeply nested SCIM body made
// Worker.postMessage throw
// (issue 96). The scan allocates nothing: one state object, reused by whoever scans often (an
// evaluation worker's context), which can also be fed a body a chunk at a time (a gzip body as it
// inflates, src/events/body.ts). It only counts: the text's syntax is still JSON.parse's to judge,
// so text that is not JSON passes here and is refused there, with JSON.parse's own words.

/**
 * A request body's cap (body.ts reads bodies within it): here, beside the bounds derived from it, so that
 * what scans bodies without reading them (the edge, src/edge) imports nothing of the HTTP layer.
 */
export const kMaxBodyBytes = 1024 * 1024;

/**
 * Arrays and objects nest at most this deep (the top value is at depth 1): twice the 64 levels a flag's
 * rule may nest (src/targeting/refs.ts), so a rule at its own limit still fits in the document that
 * carries it (a flags-as-code file, a flag's body), and far below what structured cloning survives.
 */
export const kMaxJsonDepth = 128;
/**
 * Elements a body holds at most: every value (arrays, objects, strings, numbers, true, false, null)
 * and every object key. One per 4 bytes of the 1 MiB body cap: a body within the cap reaches it only
 * with elements of fewer than 4 bytes each, and a gzip body inflated to 8 MiB is held to the same count.
 */
export const kMaxJsonElements = kMaxBodyBytes / 4;

/** What a body past a bound is told: built once. */
export const kTooDeep = `The request body nests arrays and objects deeper than ${kMaxJsonDepth} levels; send it flatter.`;
export const kTooManyElements = `The request body holds more than ${kMaxJsonElements} JSON elements (values and keys); send fewer.`;

const kQuote = 0x22;
const kBackslash = 0x5c;
const kOpenSquare = 0x5b;
const kCloseSquare = 0x5d;
const kOpenCurly = 0x7b;
const kCloseCurly = 0x7d;
const kComma = 0x2c;
const kColon = 0x3a;
const kSpace = 0x20;
const kTab = 0x09;
const kLineFeed = 0x0a;
const kReturn = 0x0d;

/**
 * One scan of a JSON text, fed as UTF-8 bytes or as a string (its structure is ASCII, so a code unit
 * and a byte read alike), whole or in parts. Start each text with reset().
 */
export class JsonBounds {
  /** Null while the text is within the bounds; once past one, kTooDeep or kTooManyElements. */
  problem: string | null = null;
  private depth = 0;
  private elements = 0;
  private inString = false;
  /** In a string, after a backslash: the next character is escaped (a quote there does not end it). */
  private escaped = false;
  /** In a number, true, false or null: counted at its first character. */
  private inScalar = false;

  reset(): this {
    this.problem = null;
    this.depth = 0;
    this.elements = 0;
    this.inString = false;
    this.escaped = false;
    this.inScalar = false;
    return this;
  }

  /** Scans the next UTF-8 bytes of the text; false once a bound is passed (`problem` says which). */
  scanBytes(bytes: Uint8Array): boolean {
    if (this.problem !== null) return false;
    for (let i = 0; i < bytes.length; i++) if (!this.step(bytes[i]!)) return false;
    return true;
  }

  /** Scans the next part of the text as a string; false once a bound is passed (`problem` says which). */
  scanText(text: string): boolean {
    if (this.problem !== null) return false;
    for (let i = 0; i < text.length; i++) if (!this.step(text.charCodeAt(i))) return false;
    return true;
  }

  private step(c: number): boolean {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === kBackslash) this.escaped = true;
      else if (c === kQuote) this.inString = false;
      return true;
    }
    switch (c) {
      case kQuote:
        this.inString = true;
        this.inScalar = false;
        return this.count();
      case kOpenSquare:
      case kOpenCurly:
        this.inScalar = false;
        if (++this.depth > kMaxJsonDepth) {
          this.problem = kTooDeep;
          return false;
        }
        return this.count();
      case kCloseSquare:
      case kCloseCurly:
        this.inScalar = false;
        // Below zero only in text that is not JSON, which JSON.parse refuses at that character.
        if (this.depth > 0) this.depth--;
        return true;
      case kComma:
      case kColon:
      case kSpace:
      case kTab:
      case kLineFeed:
      case kReturn:
        this.inScalar = false;
        return true;
      default:
        if (this.inScalar) return true;
        this.inScalar = true;
        return this.count();
    }
  }

  private count(): boolean {
    if (++this.elements <= kMaxJsonElements) return true;
    this.problem = kTooManyElements;
    return false;
  }
}

/** Texts of at most this many code units (or bytes) pass without a scan (jsonBoundsProblem). */
const kShortText = 2 * kMaxJsonDepth;

/** The scan every caller that parses once in a while shares (scans are synchronous: one at a time per thread). */
const kShared = new JsonBounds();

/** Null when the JSON text (bytes or string) is within the bounds; else what is wrong with it (kTooDeep or kTooManyElements). */
export function jsonBoundsProblem(text: Uint8Array | string): string | null {
  // A text this short cannot pass either bound as JSON: a value nested n deep takes 2n characters, and
  // what JSON.parse refuses it builds no deeper than the text is long. Most evaluation contexts are this
  // short, and every one is read on the evaluation hot path: they skip the scan.
  if (text.length <= kShortText) return null;
  kShared.reset();
  if (typeof text === 'string') kShared.scanText(text);
  else kShared.scanBytes(text);
  return kShared.problem;
}

/** Path segments a refusal names at most: enough to name the flag or field, not the whole descent. */
const kPathSegments = 8;

/**
 * Where a text the scan refused as too deep passes the bound, as a path (`flags.deep.targeting.!.0…`):
 * object keys and array indices from the top, the first kPathSegments of them. Run only on a refusal,
 * over a text within the body cap, its keys read as they come (nothing parsed, nothing built but the path).
 */
export function tooDeepPath(text: string): string {
  // One frame per open array or object: an object's last key, or an array's index.
  const frames: (string | number)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === kQuote) {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== kQuote) end += text.charCodeAt(end) === kBackslash ? 2 : 1;
      if (expectKey && frames.length > 0) frames[frames.length - 1] = text.slice(i + 1, Math.min(end, i + 65));
      expectKey = false;
      i = end;
    } else if (c === kOpenCurly || c === kOpenSquare) {
      if (frames.length === kMaxJsonDepth) break;
      frames.push(c === kOpenSquare ? 0 : '');
      expectKey = c === kOpenCurly;
    } else if (c === kCloseCurly || c === kCloseSquare) {
      frames.pop();
      expectKey = false;
    } else if (c === kComma && frames.length > 0) {
      const top = frames[frames.length - 1]!;
      if (typeof top === 'number') frames[frames.length - 1] = top + 1;
      else expectKey = true;
    }
  }
  const shown = frames.slice(0, kPathSegments).join('.');
  return frames.length > kPathSegments ? `${shown}…` : shown;
}

/** The refusal of a whole text past a bound: a depth's names where it is passed. */
export function jsonBoundsRefusal(text: string, problem: string): string {
  if (problem !== kTooDeep) return problem;
  const path = tooDeepPath(text);
  return path === ''
    ? problem
    : `The request body nests arrays and objects deeper than ${kMaxJsonDepth} levels at ${path}; send it flatter.`;
}
