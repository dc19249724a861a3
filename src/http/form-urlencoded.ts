// An application/x-www-form-urlencoded query, as URLSearchParams and HTML forms write it: its pairs, and
// each name and value decoded ("+" is a space and %XX escapes are UTF-8 bytes). The Evaluation API refuses
// a component this cannot decode (src/evaluation/engine/query.ts); Unleash's front-end API reads it as
// URLSearchParams does (src/unleash/context.ts).

const kPercent = 37; // '%'
const kPlus = 43; // '+'
const kSpace = ' ';
/** FormPairs' nextEq before its first search. */
const kUnknown = -2;

/**
 * The pairs of a query, as URLSearchParams splits them: on "&", empty pieces skipped, the name up to the
 * first "=" and the value after it (none: an empty value). One cursor is kept per parser and set again
 * for each query, so that walking a query makes nothing: after a `next()` that answers true, the name is
 * `raw[start..eq)` and the value `raw[eq + 1..end)` when `eq < end`.
 */
export class FormPairs {
  start = 0;
  eq = 0;
  end = 0;
  private raw = '';
  private from = 0;
  /**
   * The first "=" at or after the pair being read, -1 when none is left, kUnknown before the first search:
   * a search is made again only once the pairs have passed it, so a query of many pairs without "=" is read
   * in one pass, not one search to its end per pair (quadratic in the pairs before).
   */
  private nextEq = kUnknown;

  /** Walks `raw` from `from` (past a leading "?" where the reader drops one). */
  over(raw: string, from: number): this {
    this.raw = raw;
    this.from = from;
    this.nextEq = kUnknown;
    return this;
  }

  next(): boolean {
    const { raw } = this;
    const length = raw.length;
    while (this.from < length) {
      const start = this.from;
      let amp = raw.indexOf('&', start);
      if (amp === -1) amp = length;
      this.from = amp + 1;
      if (amp > start) {
        if (this.nextEq === kUnknown || (this.nextEq !== -1 && this.nextEq < start)) this.nextEq = raw.indexOf('=', start);
        const eq = this.nextEq === -1 || this.nextEq > amp ? amp : this.nextEq;
        this.start = start;
        this.eq = eq;
        this.end = amp;
        return true;
      }
    }
    return false;
  }
}

/**
 * `raw[start..end)` decoded, or null when it is not decodable: a "%" that starts no %XX escape, or escapes
 * that are not valid UTF-8. Where it answers, its answer is URLSearchParams's for a string without lone
 * surrogates (URLSearchParams would first write each as U+FFFD).
 *
 * On every evaluation request with a query: a component without "%" or "+" is its slice, and one whose
 * escapes are all ASCII (`properties%5Bplan%5D`, `user%40example.com`, as unleash-proxy-client and
 * encodeURIComponent write them) is decoded here, without decodeURIComponent (a third of the time of an
 * Unleash front-end query's decoding went to it). Any other escape goes to decodeURIComponent, whole.
 */
export function decodeFormComponent(raw: string, start: number, end: number): string | null {
  let i = start;
  while (i < end) {
    const c = raw.charCodeAt(i);
    if (c === kPercent || c === kPlus) break;
    i++;
  }
  if (i === end) return raw.slice(start, end);
  let out = raw.slice(start, i);
  let run = i;
  for (; i < end; i++) {
    const c = raw.charCodeAt(i);
    if (c === kPlus) {
      out += raw.slice(run, i) + kSpace;
      run = i + 1;
    } else if (c === kPercent) {
      const byte = i + 2 < end ? (hexDigit(raw.charCodeAt(i + 1)) << 4) | hexDigit(raw.charCodeAt(i + 2)) : -1;
      // Not two hex digits (the value is then negative), or a byte of a multi-byte character.
      if (byte < 0 || byte >= 0x80) return decodeWhole(raw.slice(start, end));
      out += raw.slice(run, i) + String.fromCharCode(byte);
      i += 2;
      run = i + 1;
    }
  }
  return out + raw.slice(run, end);
}

/** A hex digit's value, or -256 (so that a byte made with it is negative). */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -256;
}

function decodeWhole(text: string): string | null {
  try {
    // decodeURIComponent rejects both malformed escapes and invalid UTF-8 (overlong forms, surrogates).
    return decodeURIComponent(text.includes('+') ? text.replaceAll('+', kSpace) : text);
  } catch {
    return null;
  }
}
