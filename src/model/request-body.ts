// JSON request bodies of POST and PATCH: content type, empty body, encoding and syntax, each with a fix in the detail.
import { isUtf8 } from 'node:buffer';
import { FlagwireError } from '../errors.js';
import { jsonBoundsProblem, jsonBoundsRefusal } from '../http/json-bounds.js';
import { unicodeProblems } from './validation.js';

export type BodyKind = 'create' | 'patch';

/**
 * A request body as the main thread received it. The writer's create and patch commands parse it, so
 * that a body that is not a JSON object is reported with the request's other problems, and so that no
 * parsed value (which may nest arbitrarily deep) has to cross to the writer thread by structured clone.
 */
export interface ReceivedBody {
  /**
   * The bytes as received: decoded here, so that bytes that are not UTF-8 are refused, not replaced.
   * The request's own (keepBody, src/http/body.ts): moved, when not small, to the thread that parses
   * them (movableBuffers), so the thread that sent them reads them no more.
   */
  bytes: Uint8Array;
  contentType: string;
}

/**
 * Bodies smaller than this cross to another thread by structured clone: copying them costs less than
 * moving them (bench/request-body.bench.ts; bench/RESULTS.md).
 */
const kMoveMinBytes = 4096;

/**
 * What a postMessage carrying `body` may move instead of copying: its ArrayBuffer when the bytes are
 * all of it (keepBody's) and not small, nothing otherwise (a view into a shared pool, or a part of a
 * larger buffer, is copied by structured clone as before). A large request body crossed to the writer
 * thread by structured clone was its third copy (after the reader's and the request's own).
 */
export function movableBuffers(body: ReceivedBody | null | undefined): ArrayBuffer[] {
  if (body === null || body === undefined || body.bytes.byteLength < kMoveMinBytes) return [];
  const { bytes } = body;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return whole && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
}

/**
 * A JSON text this process has (the console's form, the command line's file) as a command takes a
 * received body: one input for every caller, read by the same rules.
 */
export function jsonBody(text: string): ReceivedBody {
  return { bytes: new TextEncoder().encode(text), contentType: 'application/json' };
}

/** The body as a JSON object (at least one key for a patch), or the problem that says what to send instead. */
export type ParsedBody = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

const kNoFields = 'No fields to update: send a JSON object with at least one of "enabled", "trafficPercentage", "cohorts", "audienceId".';
const kEmptyBody = 'The request body is empty: send a JSON object with Content-Type: application/json.';

const kNotUtf8 = 'The request body is not valid UTF-8; send the JSON encoded as UTF-8 (I-JSON, RFC 7493).';

/**
 * The body as a JSON object, or its one problem. The encoding and the strings are checked here, for
 * every body before any field's rule: text that is not valid Unicode (bytes that are not UTF-8, or
 * lone surrogates written as escapes, anywhere, keys included) is refused, never stored altered; so is
 * a body past the JSON bounds (src/http/json-bounds.ts), before it is parsed.
 */
export function parseJsonObject(body: ReceivedBody, kind: BodyKind): ParsedBody {
  const { bytes, contentType } = body;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Decoded with replacement for the checks before the encoding's own (a blank body, the media type);
  // JSON is parsed only from bytes that isUtf8 accepted, so no U+FFFD stands in for a byte sent.
  const text = buffer.toString('utf8');
  if (text.trim() === '') return { ok: false, problem: kind === 'patch' ? kNoFields : kEmptyBody };
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return {
      ok: false,
      problem: `Content-Type must be application/json${mediaType === '' ? ' (none was sent)' : `, not ${mediaType}`}; send the body as JSON with that header.`,
    };
  }
  if (!isUtf8(buffer)) return { ok: false, problem: kNotUtf8 };
  // Before JSON.parse builds it: nothing too deep or too large to walk, check or clone is ever made.
  const outOfBounds = jsonBoundsProblem(buffer);
  if (outOfBounds !== null) return { ok: false, problem: jsonBoundsRefusal(text, outOfBounds) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `The request body is not valid JSON (${(err as Error).message}); send a JSON object.` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { ok: false, problem: `The request body must be a JSON object, not ${got}.` };
  }
  const problems = unicodeProblems(value, { quoteKeys: kind === 'patch' });
  if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
  if (kind === 'patch' && Object.keys(value).length === 0) return { ok: false, problem: kNoFields };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * A created record's body as a JSON object checked against `validator` (a compiled TypeBox schema:
 * src/model/validation.ts), or the 400 listing every problem.
 */
export function checkedBody<T>(received: ReceivedBody, validator: { check(v: unknown): v is T; problems(v: unknown): string[] }): T {
  const parsed = parseJsonObject(received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  if (!validator.check(parsed.value)) throw new FlagwireError('INVALID_REQUEST', validator.problems(parsed.value).join('; '));
  return parsed.value;
}
