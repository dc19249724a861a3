// Writing an evaluation answer on the main thread: the batcher's last step for every request, so the
// hottest code of the front end after uWS's own (issue 30's profile).
//
// Every evaluation answer has the same header lines but one, Flagwire-Revision, whose value changes
// only with a write. So the lines are made once per revision, as one header: uWS writes a header as
// `name: value\r\n` and does not look into the value, so a value that holds the other lines' CRLFs
// writes them all with one native call. Per answer that is one writeHeader (two buffers for uWS to
// look up) instead of five (ten); a 200 writes no status line either, since uWS's end() writes
// `200 OK` itself when none was written. The bytes are ours, never a client's.
//
// uWS runs a cork callback synchronously, so the values it needs are passed through module variables
// and one module-level function does the work: no closure per answer.
import { closesConnection, kCorsOrigin, kNoSniff, statusLine, type PendingResponse } from '../../http/http.js';
import { kRevisionHeader } from '../../http/revisions.js';

const kCrlf = '\r\n';

/** The header lines of every answer at one revision: Flagwire-Revision first, carrying the others. */
export class AnswerHeads {
  private revision = -1;
  /** After `Flagwire-Revision: `: the revision, then CORS, nosniff, the exposed headers and JSON's Content-Type. */
  plain: Buffer = Buffer.alloc(0);
  /** The same for an answer with an ETag (exposed too); its Content-Type is written apart (a 304 has none). */
  tagged: Buffer = Buffer.alloc(0);

  /** `this`, made current for `revision` (new bytes only when the revision changed). */
  at(revision: number): this {
    if (revision !== this.revision) {
      this.revision = revision;
      const common = `${revision}${kCrlf}${kCorsOrigin[0]}: ${kCorsOrigin[1]}${kCrlf}${kNoSniff[0]}: ${kNoSniff[1]}`;
      this.plain = Buffer.from(`${common}${kCrlf}Access-Control-Expose-Headers: ${kRevisionHeader}${kCrlf}Content-Type: application/json`);
      this.tagged = Buffer.from(`${common}${kCrlf}Access-Control-Expose-Headers: ETag, ${kRevisionHeader}`);
    }
    return this;
  }
}

const kRevisionName = Buffer.from(kRevisionHeader);
const kContentTypeName = Buffer.from('Content-Type');
const kJson = Buffer.from('application/json');
const kEtagName = Buffer.from('ETag');
const kRetryAfterName = Buffer.from('Retry-After');
const kOneSecond = Buffer.from('1');
const kStatusLines = new Map<number, Buffer>();

function statusBytes(status: number): Buffer {
  let line = kStatusLines.get(status);
  if (line === undefined) {
    line = Buffer.from(statusLine(status));
    kStatusLines.set(status, line);
  }
  return line;
}

const kOk = statusBytes(200);
const kNotModified = statusBytes(304);

let corkRes: PendingResponse | null = null;
let corkStatus: Buffer = kOk;
let corkBody: Uint8Array = kJson;
let corkTag: Uint8Array = kJson;
let corkLines: Buffer = kJson;
/** Only for refusals: Retry-After: 1, and the connection closed after the answer. */
let corkRetry = false;
let corkClose = false;

function writeCorked(): void {
  const res = corkRes!;
  if (corkStatus !== kOk) res.writeStatus(corkStatus);
  res.writeHeader(kRevisionName, corkLines);
  if (corkRetry) res.writeHeader(kRetryAfterName, kOneSecond);
  res.end(corkBody, corkClose || closesConnection(res));
}

function writeTaggedCorked(): void {
  const res = corkRes!;
  if (corkStatus !== kOk) res.writeStatus(corkStatus);
  res.writeHeader(kRevisionName, corkLines);
  res.writeHeader(kEtagName, corkTag);
  if (corkStatus === kNotModified) {
    // RFC 9110 §15.4.5: a 304 has no content; §8.6: its Content-Length could only repeat the 200's,
    // which is not computed. uWS writes a Content-Length whenever it is given an argument (undefined
    // included: 2^63), so the common case passes none; closing the connection while the server drains
    // needs the argument, and 0 is the one length that describes no body.
    if (closesConnection(res)) res.endWithoutBody(0, true);
    else res.endWithoutBody();
    return;
  }
  res.writeHeader(kContentTypeName, kJson);
  res.end(corkBody, closesConnection(res));
}

/** Writes a whole JSON answer, corked, with `heads`' lines; marks it answered so nothing answers it twice. */
export function answer(res: PendingResponse, status: number, body: Uint8Array, heads: AnswerHeads): void {
  if (res.aborted) return;
  res.aborted = true;
  corkRes = res;
  corkStatus = status === 200 ? kOk : statusBytes(status);
  corkBody = body;
  corkLines = heads.plain;
  res.cork(writeCorked);
  corkRes = null;
}

/** Like answer(), with an ETag header; a 304 is sent without a body. */
export function answerTagged(res: PendingResponse, status: number, body: Uint8Array, tag: Uint8Array, heads: AnswerHeads): void {
  if (res.aborted) return;
  res.aborted = true;
  corkRes = res;
  corkStatus = status === 200 ? kOk : statusBytes(status);
  corkBody = body;
  corkTag = tag;
  corkLines = heads.tagged;
  res.cork(writeTaggedCorked);
  corkRes = null;
}

/** A refusal (413, 503, 400): as answer(), with Retry-After: 1 when asked, the connection closed when asked. */
export function answerRefusal(
  res: PendingResponse,
  status: number,
  body: Uint8Array,
  heads: AnswerHeads,
  retryAfter: boolean,
  closeConnection: boolean,
): void {
  corkRetry = retryAfter;
  corkClose = closeConnection;
  answer(res, status, body, heads);
  corkRetry = false;
  corkClose = false;
}
