// The batch format between the main thread and an eval worker: one buffer holds every request of the
// batch (the slot of a batch channel, batch-channel.ts), and the worker writes every answer over it (or
// into a larger one, if the answers did not fit). One structured-clone-free hand-off per batch each way,
// instead of one message (and one object graph to clone) per request.
//
// Requests, written by the main thread from offset 0, back to back (integers little-endian):
//
//   ┌───────┬─────────┬────────────┬────────────┬────────────────┬──────────────────┬────────────┐
//   │ route │ idBytes │ queryBytes │ extraBytes │ id             │ query            │ extra      │
//   │ u8    │ u32     │ u32        │ u32        │ UTF-8, as sent │ UTF-8, undecoded │ UTF-8      │  × count
//   └───────┴─────────┴────────────┴────────────┴────────────────┴──────────────────┴────────────┘
//
// `route` is the request's route number (src/all-routes.ts); its evaluation route set (routes.ts) decides what
// its id, query and extra slots hold, and documents it: the Evaluation API's in evaluation-api-routes.ts, OFREP's
// in src/ofrep/routes.ts.
//
// Answers, written by the worker over the same buffer once it has read every request (u32, aligned):
//
//   ┌───────┬──────────────────┬──────────────────────────────────┬─────────────────────────────────────────┐
//   │ count │ revision         │ word │ bodyStart │ bodyBytes     │ body bytes [+ ETag bytes], in order     │
//   │       │ low u32, high u32│        × count                  │ (JSON, ready to send)                   │
//   └───────┴──────────────────┴──────────────────────────────────┴─────────────────────────────────────────┘
//
// `revision` is the store revision of the batch's snapshot (engine.ts): every answer of the batch was
// computed at it, and says so (Flagwire-Revision, src/http/revisions.ts). Once per batch, not per answer.
// `word` is the HTTP status in its low 16 bits and, for answers that carry an ETag (OFREP bulk), the
// ETag's length in its high 16 bits; the ETag's bytes are the last ones of the answer's bytes. For
// answers without one (the Evaluation API's) the high bits are 0. Answers with the same body (one
// prebuilt body put again: ResultWriter.put) may name the same bytes; the last answer's end is where
// the answers' bytes end. A body starts up to 7 bytes past the one before it, placed so that its copy
// goes a word at a time (ResultWriter's assembly says why).

import type { UsageCount } from '../../model/flags.js';
import { maxUtf8Bytes, readUtf8, writeUtf8 } from '../../bytes/utf8.js';
import { matchesIfNoneMatch } from '../../http/entity-tags.js';
import { grownAnswerBuffer, kMaxSlotBytes } from './batch-channel.js';

/** A route number (src/all-routes.ts), 0..255: which evaluation route set (routes.ts) evaluates the request. */
export type Route = number;

/** A batch as the main thread hands it to the pool: `count` requests in the first `bytes` bytes of `buffer`. */
export interface EvalTask {
  buffer: ArrayBuffer;
  bytes: number;
  count: number;
}

const kRequestHeaderBytes = 13;
/** Bytes before the answers' entries: count, revision (two u32). */
const kAnswersHeaderBytes = 12;

/** Main thread: appends requests to a buffer, growing it when a request does not fit. */
export class RequestWriter {
  private bytes: Buffer;
  private pos = 0;
  count = 0;

  constructor(buffer: ArrayBuffer) {
    this.bytes = Buffer.from(buffer);
  }

  get buffer(): ArrayBuffer {
    return this.bytes.buffer as ArrayBuffer;
  }

  /** Bytes of requests written so far. */
  get bytesUsed(): number {
    return this.pos;
  }

  /** `query` is a string (a raw query) or bytes (a request body, copied as is). */
  add(route: Route, id: string, query: string | Uint8Array, extra = ''): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit; reserve the worst case so writes never truncate.
    const queryWorst = typeof query === 'string' ? maxUtf8Bytes(query) : query.length;
    const worst = kRequestHeaderBytes + maxUtf8Bytes(id) + queryWorst + maxUtf8Bytes(extra);
    if (this.pos + worst > this.bytes.length) this.grow(this.pos + worst);
    const bytes = this.bytes;
    const at = this.pos;
    bytes[at] = route;
    const idBytes = writeUtf8(bytes, id, at + kRequestHeaderBytes);
    const queryAt = at + kRequestHeaderBytes + idBytes;
    let queryBytes: number;
    if (typeof query === 'string') {
      queryBytes = query.length === 0 ? 0 : writeUtf8(bytes, query, queryAt);
    } else {
      bytes.set(query, queryAt);
      queryBytes = query.length;
    }
    const extraBytes = extra.length === 0 ? 0 : writeUtf8(bytes, extra, queryAt + queryBytes);
    putU32(bytes, at + 1, idBytes);
    putU32(bytes, at + 5, queryBytes);
    putU32(bytes, at + 9, extraBytes);
    this.pos = queryAt + queryBytes + extraBytes;
    this.count++;
  }

  private grow(needed: number): void {
    const next = Buffer.from(new ArrayBuffer(Math.max(needed, this.bytes.length * 2)));
    this.bytes.copy(next, 0, 0, this.pos);
    this.bytes = next;
  }
}

/** Ids up to this many bytes are remembered by DecodedRequests (see idAt); longer ones are read every time. */
const kRememberedIdBytes = 128;

/**
 * Worker: every request of a batch as strings, read before the buffer is overwritten with answers. One
 * instance serves every batch: its arrays are overwritten, not reallocated.
 */
export class DecodedRequests {
  count = 0;
  readonly routes: Route[] = [];
  readonly ids: string[] = [];
  readonly queries: string[] = [];
  readonly extras: string[] = [];
  /** The id read last, and its bytes (see idAt). */
  private lastId = '';
  private readonly lastIdBytes = Buffer.alloc(kRememberedIdBytes);
  private lastIdLength = -1;

  /** Reads the `count` requests of `buffer`. */
  readRequests(buffer: ArrayBufferLike, count: number): this {
    const bytes = Buffer.from(buffer);
    let pos = 0;
    for (let i = 0; i < count; i++) {
      const idBytes = getU32(bytes, pos + 1);
      const queryBytes = getU32(bytes, pos + 5);
      const extraBytes = getU32(bytes, pos + 9);
      const idStart = pos + kRequestHeaderBytes;
      const queryStart = idStart + idBytes;
      const extraStart = queryStart + queryBytes;
      this.routes[i] = bytes[pos] as Route;
      this.ids[i] = this.idAt(bytes, idStart, idBytes);
      this.queries[i] = queryBytes === 0 ? '' : readUtf8(bytes, queryStart, extraStart);
      this.extras[i] = extraBytes === 0 ? '' : readUtf8(bytes, extraStart, extraStart + extraBytes);
      pos = extraStart + extraBytes;
    }
    this.count = count;
    return this;
  }

  /**
   * The id at `bytes[start..start + length)`. Most requests of a batch, and of the batches after it, name
   * the same few flags: an id whose bytes equal the last one read is that same string, which costs no
   * decoding, and whose hash V8 has already computed for the engine's flag look-up.
   */
  private idAt(bytes: Buffer, start: number, length: number): string {
    const last = this.lastIdBytes;
    if (length === this.lastIdLength) {
      let i = 0;
      while (i < length && bytes[start + i] === last[i]) i++;
      if (i === length) return this.lastId;
    }
    const id = readUtf8(bytes, start, start + length);
    if (length <= kRememberedIdBytes) {
      bytes.copy(last, 0, start, start + length);
      this.lastId = id;
      this.lastIdLength = length;
    }
    return id;
  }
}

// The batch's u32s (the requests' lengths, the answers' header), little-endian, read and written in
// place: Buffer's readUInt32LE and writeUInt32LE check their arguments on every call, these compile to
// four byte moves.
function getU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function putU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value;
  bytes[at + 1] = value >>> 8;
  bytes[at + 2] = value >>> 16;
  bytes[at + 3] = value >>> 24;
}

/**
 * Where the worker assembles a body written piece by piece (open, push, close) before its one copy into
 * the batch's buffer. A slot is a SharedArrayBuffer, and V8 copies into shared memory with relaxed atomic
 * stores, a byte at a time unless source and destination sit alike against 8-byte words: a bulk answer's
 * entries pushed into the slot cost several times what they cost pushed into plain memory, and the body's
 * one aligned copy into the slot adds little (bench/RESULTS.md, Costs behind the code's choices). One per
 * thread, grown as needed,
 * at offset 0 of its own memory (so aligned); one grown past kMaxSlotBytes for a rare large body is let go
 * once that body is copied, as such a body's answer buffer is (grownAnswerBuffer).
 */
const kAssemblyBytes = 64 * 1024;
let assembly = Buffer.allocUnsafeSlow(kAssemblyBytes);

/** The first offset from `pos` that sits against 8-byte words as `byteOffset` does: a copy from there goes a word at a time. */
function alignedLike(pos: number, byteOffset: number): number {
  return pos + ((byteOffset - pos) & 7);
}

/**
 * Worker: writes the answers in request order. A body is either one `put` (a precomputed Buffer is
 * copied in, nothing else allocated) or `open`, any number of `push`/`pushByte`, then `close` (assembled
 * apart, then copied in once: see `assembly`).
 */
export class ResultWriter {
  private bytes: Buffer;
  private header = kAnswersHeaderBytes;
  /** Where the answers' bytes written so far end. */
  private pos = 0;
  /** Bytes of the open body in `assembly`. */
  private assembled = 0;
  /** The body `put` copied last, and where: an answer that puts the same one again points there (see put). */
  private lastPut: Uint8Array | null = null;
  private lastPutStart = 0;

  /** `revision`: the store revision of the batch's snapshot (engine.ts), which every answer names. */
  constructor(
    buffer: ArrayBufferLike,
    private readonly count: number,
    revision = 0,
  ) {
    this.bytes = Buffer.from(buffer);
    const headerBytes = kAnswersHeaderBytes + 12 * count;
    if (headerBytes > this.bytes.length) this.grow(headerBytes);
    putU32(this.bytes, 0, count);
    putU32(this.bytes, 4, revision % 2 ** 32);
    putU32(this.bytes, 8, Math.floor(revision / 2 ** 32));
    this.pos = headerBytes;
  }

  /**
   * `body` is a prebuilt answer, never changed once made (the engine's and the route sets' bodies are
   * kept per flag version or are constants). Most answers of a batch put the same one (one flag, one
   * decision): an answer whose body is the one put last points at those bytes instead of copying them
   * again, so the main thread also makes one view for them all (ResultReader.body). The batch's last
   * answer is always copied, so that it ends where the answers' bytes end (ResultReader.bytesUsed).
   */
  put(status: number, body: Uint8Array): void {
    if (body === this.lastPut && this.header !== kAnswersHeaderBytes + 12 * (this.count - 1)) {
      this.entry(status, this.lastPutStart, body.length);
      return;
    }
    const start = this.copyIn(body);
    this.entry(status, start, body.length);
    this.lastPut = body;
    this.lastPutStart = start;
  }

  open(): void {
    this.assembled = 0;
  }

  push(body: Uint8Array): void {
    const end = this.assembled + body.length;
    if (end > assembly.length) growAssembly(end, this.assembled);
    assembly.set(body, this.assembled);
    this.assembled = end;
  }

  pushByte(byte: number): void {
    if (this.assembled === assembly.length) growAssembly(this.assembled + 1, this.assembled);
    assembly[this.assembled++] = byte;
  }

  /** The bytes pushed since `open()` (a view, valid until the next push). */
  openBody(): Buffer {
    return assembly.subarray(0, this.assembled);
  }

  /** Drops the bytes pushed since `open()` (a 304 answers without the body it hashed). */
  rewind(): void {
    this.assembled = 0;
  }

  /**
   * Closes the open answer with its ETag `tag` (a hash of the bytes pushed since `open()`): a 304 with
   * only the tag where `ifNoneMatch` names it, the body it hashed dropped; else a 200 with both.
   */
  closeTagged(tag: Uint8Array, ifNoneMatch: string): void {
    if (matchesIfNoneMatch(ifNoneMatch, tag)) {
      this.rewind();
      this.push(tag);
      this.close(304, tag.length);
      return;
    }
    this.push(tag);
    this.close(200, tag.length);
  }

  /** `tagBytes`: the last that many bytes pushed are the answer's ETag, not its body. */
  close(status: number, tagBytes = 0): void {
    const start = this.copyIn(this.openBody());
    this.entry(status | (tagBytes << 16), start, this.assembled);
    if (assembly.length > kMaxSlotBytes) assembly = Buffer.allocUnsafeSlow(kAssemblyBytes);
  }

  /** Copies `body` after the answers so far, placed to copy a word at a time; where it starts. */
  private copyIn(body: Uint8Array): number {
    const start = alignedLike(this.pos, body.byteOffset);
    if (start + body.length > this.bytes.length) this.grow(start + body.length);
    this.bytes.set(body, start);
    this.pos = start + body.length;
    return start;
  }

  private entry(word: number, start: number, length: number): void {
    const bytes = this.bytes;
    putU32(bytes, this.header, word);
    putU32(bytes, this.header + 4, start);
    putU32(bytes, this.header + 8, length);
    this.header += 12;
  }

  /** The buffer holding every answer (after `count` closes): the one given, unless the answers outgrew it. */
  finish(): ArrayBufferLike {
    if (this.header !== kAnswersHeaderBytes + 12 * this.count)
      throw new Error(`eval batch answered ${(this.header - kAnswersHeaderBytes) / 12} of ${this.count} requests`);
    return this.bytes.buffer;
  }

  private grow(needed: number): void {
    // Answers too large for the slot (OFREP bulk: 88 KB each for 350 flags) would double the buffer again
    // and again, each time copying what was written: room at once for the batch's other answers at the
    // size of those so far (the one being written counted), which one more doubling at most corrects.
    const written = (this.header - kAnswersHeaderBytes) / 12 + 1;
    const headerBytes = kAnswersHeaderBytes + 12 * this.count;
    const projected = headerBytes + Math.ceil(((needed - headerBytes) / written) * this.count);
    // The batch channel's kind of buffer: the slot's new, larger buffer, kept for the next batches.
    const next = Buffer.from(grownAnswerBuffer(Math.max(needed, this.bytes.length * 2, projected)));
    this.bytes.copy(next, 0, 0, this.pos);
    this.bytes = next;
  }
}

/** Makes `assembly` hold at least `needed` bytes, keeping its first `kept`. */
function growAssembly(needed: number, kept: number): void {
  const next = Buffer.allocUnsafeSlow(Math.max(needed, assembly.length * 2));
  assembly.copy(next, 0, 0, kept);
  assembly = next;
}

/** Main thread: the answers of a batch, read in place (the header as a Uint32Array view). */
export class ResultReader {
  readonly count: number;
  /** The store revision every answer of the batch was computed at. */
  readonly revision: number;
  private readonly header: Uint32Array;
  /** The view body() made last, and the bytes it covers: answers sharing their bytes share it (ResultWriter.put). */
  private view: Uint8Array | null = null;
  private viewStart = -1;
  private viewBytes = -1;

  constructor(readonly buffer: ArrayBufferLike) {
    const head = new Uint32Array(buffer, 0, 3);
    this.count = head[0]!;
    this.revision = head[1]! + head[2]! * 2 ** 32;
    this.header = new Uint32Array(buffer, kAnswersHeaderBytes, this.count * 3);
  }

  status(i: number): number {
    return this.header[i * 3]! & 0xffff;
  }

  /** Bytes of the buffer the answers take, header included: where the last answer ends. */
  get bytesUsed(): number {
    if (this.count === 0) return kAnswersHeaderBytes;
    const last = (this.count - 1) * 3;
    return this.header[last + 1]! + this.header[last + 2]!;
  }

  /** Status and ETag length in one number (see the drawing): > 0xffff when the answer has an ETag. */
  word(i: number): number {
    return this.header[i * 3]!;
  }

  /**
   * A view of answer i's body (the bytes are not copied: uWS copies them on end). The same view as the
   * answer before when both have the same bytes: making a view per answer was a tenth of a microsecond of
   * the main thread's per request (issue 57's profile), and most answers of a batch share their bytes.
   */
  body(i: number): Uint8Array {
    const start = this.header[i * 3 + 1]!;
    const bytes = this.header[i * 3 + 2]! - (this.header[i * 3]! >>> 16);
    if (start !== this.viewStart || bytes !== this.viewBytes) {
      this.view = new Uint8Array(this.buffer, start, bytes);
      this.viewStart = start;
      this.viewBytes = bytes;
    }
    return this.view!;
  }

  /** Answer i's ETag bytes (empty when it has none). */
  tag(i: number): Uint8Array {
    const tagBytes = this.header[i * 3]! >>> 16;
    return new Uint8Array(this.buffer, this.header[i * 3 + 1]! + this.header[i * 3 + 2]! - tagBytes, tagBytes);
  }

  bodyText(i: number): string {
    return Buffer.from(this.body(i)).toString('utf8');
  }

  tagText(i: number): string {
    return Buffer.from(this.tag(i)).toString('utf8');
  }
}

/** A worker's answer to a usage collection: the length of its counts' JSON (u32), then the JSON. */
export function encodeUsage(counts: readonly UsageCount[]): ArrayBuffer {
  const json = Buffer.from(JSON.stringify(counts));
  const buffer = new ArrayBuffer(4 + json.length);
  new DataView(buffer).setUint32(0, json.length, true);
  json.copy(Buffer.from(buffer, 4));
  return buffer;
}

/** Reads encodeUsage's answer (at the start of a possibly larger buffer). */
export function decodeUsage(buffer: ArrayBufferLike): UsageCount[] {
  const length = new DataView(buffer).getUint32(0, true);
  return JSON.parse(Buffer.from(buffer, 4, length).toString('utf8')) as UsageCount[];
}
