// Checks the data file's LMDB header before LMDB maps the file. lmdb-js does not return an error for
// a file that is not LMDB or that was cut short: it crashes the process (SIGSEGV on a foreign or
// garbled header, SIGBUS on a truncated file; checked with lmdb 3.5.6). A damaged or foreign
// flagwire.mdb must be refused with a message that says what to do, never by a crash.
//
// The two meta pages at the start of the file (LMDB data version 2, 64-bit build):
//
//   offset   0  u64  page number            offset  48  u32  page size (free DB's md_pad)
//           18  u16  page flags (P_META=8)           88  u64  root page of the free-page DB
//           24  u32  magic 0xBEEFC0DE               136  u64  root page of the main DB
//           28  u32  data version (2)               144  u64  last page in use
//                                                   152  u64  id of the txn that wrote this meta
//
// LMDB uses the meta page with the higher txn id. Every page it reaches from there must lie inside
// the file; the two roots are the pages every read starts from, so a file that ends before them was
// cut short.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const kMagic = 0xbeefc0de;
const kDataVersion = 2;
const kMetaFlag = 0x08;
const kNoPage = 0xffffffffffffffffn;
const kHeaderBytes = 160;

export type DataFileProblem = { kind: 'foreign' | 'damaged'; reason: string };

/** A data dir or data file that cannot be used; the message says why and what to do. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

interface Meta {
  pageSize: number;
  freeRoot: bigint;
  mainRoot: bigint;
  lastPage: bigint;
  txnId: bigint;
}

function readMeta(page: Buffer): Meta | string {
  if (page.length < kHeaderBytes) return 'its header page is incomplete';
  if ((page.readUInt16LE(18) & kMetaFlag) === 0) return 'its header page is not an LMDB meta page';
  if (page.readUInt32LE(24) !== kMagic) return 'its header page has no LMDB signature';
  if ((page.readUInt32LE(28) & 0xffff) !== kDataVersion)
    return `it is LMDB data version ${page.readUInt32LE(28) & 0xffff}, not ${kDataVersion}`;
  return {
    pageSize: page.readUInt32LE(48),
    freeRoot: page.readBigUInt64LE(88),
    mainRoot: page.readBigUInt64LE(136),
    lastPage: page.readBigUInt64LE(144),
    txnId: page.readBigUInt64LE(152),
  };
}

/**
 * What is wrong with the data file at `path`, or null when LMDB can open it (or it is empty or absent).
 *
 * Another process (the server, a command-line command) may be committing while this reads. A commit writes
 * its pages, growing the file, and then its meta page in place; reading the meta pages before the size
 * keeps every root a meta names inside the size we compare it with. A problem is reported only when a
 * second look, a moment later, finds it again: a meta page caught mid-write is whole by then, while a
 * foreign or damaged file stays what it is.
 */
export function inspectDataFile(path: string): DataFileProblem | null {
  const first = inspectOnce(path);
  if (first === null) return null;
  Atomics.wait(kPause, 0, 0, kRecheckAfterMs);
  return inspectOnce(path);
}

const kRecheckAfterMs = 50;
const kPause = new Int32Array(new SharedArrayBuffer(4));

function inspectOnce(path: string): DataFileProblem | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // absent (LMDB creates it) or unreadable (LMDB reports that itself)
  }
  try {
    if (!fstatSync(fd).isFile()) return null; // a directory: LMDB's own error says so
    const read = (offset: number): Buffer => {
      const buf = Buffer.alloc(kHeaderBytes);
      return buf.subarray(0, readSync(fd, buf, 0, kHeaderBytes, offset));
    };
    const head = read(0);
    if (head.length === 0) return null; // empty: LMDB initialises it
    const first = readMeta(head);
    if (typeof first === 'string') return { kind: 'foreign', reason: `it is not an LMDB data file (${first})` };
    const { pageSize } = first;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
      return { kind: 'damaged', reason: `its header names an impossible page size (${pageSize})` };
    }
    const second = readMeta(read(pageSize));
    const { size } = fstatSync(fd);
    if (size < 2 * pageSize) return { kind: 'damaged', reason: `it is ${size} bytes, shorter than its two header pages` };
    if (typeof second === 'string') return { kind: 'damaged', reason: `its second header page is unreadable (${second})` };
    const meta = second.txnId > first.txnId ? second : first;
    const pages = BigInt(Math.floor(size / pageSize));
    for (const root of [meta.freeRoot, meta.mainRoot]) {
      if (root !== kNoPage && (root >= pages || root > meta.lastPage)) {
        return { kind: 'damaged', reason: `it was cut short: ${size} bytes, but its index starts at page ${root} (of ${pageSize} bytes)` };
      }
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Throws a StoreOpenError naming the problem when inspectDataFile finds one. */
export function checkDataFile(path: string): void {
  const problem = inspectDataFile(path);
  if (problem === null) return;
  throw new StoreOpenError(
    problem.kind === 'foreign'
      ? `${path} is not a Flagwire data file: ${problem.reason}; move it away or use another data directory`
      : `${path} is damaged: ${problem.reason}; restore it from a backup or use another data directory`,
  );
}
