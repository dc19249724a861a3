// A change request's version (docs/approvals.md, "Approving names what was seen"): 1 when it is opened,
// one more at each edit that changes it. An approval names the version its approver saw (`ifVersion`,
// an If-Match entity tag, `--version`), and one of an older version is refused: what is applied is
// always what was approved.
import { FlagwireError } from '../errors.js';
import { entityTagList, etag } from '../http/entity-tags.js';
import type { ChangeRequest } from './records.js';

export function versionOf(request: ChangeRequest): number {
  return request.version ?? 1;
}

/**
 * The entity tag of a request's view (`body`, its JSON): `"<id>.v<version>-<hash of the body>"`, so
 * If-None-Match matches only these exact bytes, and If-Match on an approval names the version.
 */
export function requestEtag(request: ChangeRequest, body: Uint8Array): string {
  return etag(`${request.id}.v${versionOf(request)}`, body).toString('latin1');
}

const kTagVersion = /^(?:W\/)?"(chr_[A-Za-z0-9_-]+)\.v([1-9]\d{0,8})-[0-9a-f]{16}"$/;

/**
 * The version of request `requestId` an If-Match header names ('' when absent: null); a header that is
 * not one tag of ours, or one of another request, is refused.
 */
export function versionFromIfMatch(header: string, requestId: string): number | null {
  if (header === '') return null;
  const tags = entityTagList(header);
  const m = tags.length === 1 ? kTagVersion.exec(tags[0]!) : null;
  if (m === null || m[1] !== requestId) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `If-Match must be the ETag a GET of change request ${requestId} answered (one tag, "${requestId}.v<version>-…")`,
    );
  }
  return Number(m[2]);
}

/** Refuses (REQUEST_CHANGED) an approval of a version other than the request's; `ifVersion` must be a version. */
export function requireVersionSeen(request: ChangeRequest, ifVersion: unknown): void {
  if (typeof ifVersion !== 'number' || !Number.isInteger(ifVersion) || ifVersion < 1) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      'ifVersion must be the version of the change request you approve (a whole number from 1: its `version`, shown by GET and `flagwire request show`)',
    );
  }
  const now = versionOf(request);
  if (ifVersion !== now) {
    throw new FlagwireError(
      'REQUEST_CHANGED',
      `Change request ${request.id} is not the version you approved (${ifVersion}): its author's edits have made it version ${now}. Nothing was recorded; read it again and approve version ${now} if it is still right.`,
    );
  }
}
