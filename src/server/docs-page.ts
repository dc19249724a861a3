// The page behind `{docs_url}`: one anchor per error, saying what causes it and how to fix it.
import { kErrors, type ErrorCode } from '../errors.js';
import { kMaxContextBodyBytes } from '../evaluation/engine/context-bounds.js';

const kExplain: Record<ErrorCode, string> = {
  INVALID_REQUEST:
    'The body or query failed validation. The detail lists every problem with its path; fix them all and resend. An empty PATCH body or {} lists the accepted keys; a flag of a multi-environment project needs ?env=, a single-environment one must not have it.',
  MISSING_TOKEN:
    'No Authorization header was sent. Send "Authorization: Bearer fw_..." with a token created in the console. Tokens are never accepted in the URL.',
  MALFORMED_TOKEN: 'The Authorization header is not "Bearer fw_<secret>". Check for a missing "Bearer " prefix or a truncated secret.',
  UNKNOWN_TOKEN: 'No token has this secret. Secrets are shown once at creation; a lost secret needs a new token.',
  TOKEN_REVOKED: 'The token was revoked (or rotated) in the console. Use its replacement or create a new token.',
  TOKEN_EXPIRED: 'The token passed its expiry time. Create a new token; the maximum lifetime is 365 days.',
  PLAN_REQUIRED:
    'The organisation is not on Teams or Enterprise (or an active Teams trial), or its subscription lapsed. Every call is refused until it is back in good standing; existing tokens then work again.',
  INSUFFICIENT_PERMISSION: 'A read token called POST or PATCH. Use a token with write permission.',
  ENVIRONMENT_NOT_PERMITTED: 'The token is limited to other environments. The detail lists the ones it may use.',
  FORBIDDEN:
    'A create body set state for an environment the token may not change. Leave that environment out or use a token allowed for it.',
  NOT_FOUND:
    "No flag with this id exists in the token's project (flags of other projects are never visible), or the path is not a route of the API.",
  REVISION_CONFLICT:
    'An apply named the project revision its plan was made at (`ifRevision`, `--if-revision`), and the project has changed since: someone else changed a flag, an environment or an audience. Nothing was applied. Plan again, review what changed, and apply with the new revision.',
  PLAN_CONFLICT:
    'An apply named the digest of the plan it must make (`ifPlan`, `--plan`), and the changes the sent file would make now are other ones: the file is not the one that plan was made of, or `prune` differs. Nothing was applied. Apply the file the plan was made of, or plan again and review the new plan.',
  RELAY_READ_ONLY:
    'This node is a read-only relay: it serves evaluation, OFREP, the change stream and the sync service from its copy of another Flagwire node (its upstream), and holds no Management API and no web console. Nothing was changed. Send the change, or open the console, at the node the detail names: the primary, which is the upstream, or the top of a chain of relays.',
  APPROVAL_REQUIRED:
    'The change touches a guarded environment (an approval policy: docs/approvals.md) and could not be held as a change request: a release plan made before the environment was guarded and never approved, a change that also changes what a request cannot hold (renaming a guarded environment), or a project with the most pending requests it holds. Nothing was changed; the detail says which and what to do.',
  REQUEST_CONFLICT:
    'The change request was decided already, or a field it changes was changed by someone else since it was made, so applying it would undo their change. Nothing was changed (the approval was not recorded either). Its author can withdraw it and make the change again from the current state.',
  REQUEST_CHANGED:
    'An approval named the version of the change request its approver saw (`ifVersion`, If-Match, `--version`), and its author has edited it since, so what it would apply is not what was approved. Nothing was recorded. Read the request again (its diff and its `version`), and approve that version if it is still right.',
  PRECONDITION_FAILED:
    "A change of a flag named the version it was read at (If-Match with the ETag its GET answered, the command line's `--if-version`), and the flag has changed since: someone else changed it, in this environment or another. Nothing was applied. Read the flag again (its GET answers its new ETag), check your change against what it is now, and send it again with the new ETag if it is still right.",
  PAYLOAD_TOO_LARGE: `The request body is over 1 MiB, or, on Unleash's front-end API, over ${kMaxContextBodyBytes} bytes: the most an evaluation context within its bound takes (docs/operations.md: Evaluation work). Send a smaller body.`,
  TOO_MANY_REQUESTS:
    'This address sent more requests than the per-address rate limit allows in a minute (FLAGWIRE_RATE_LIMIT). Wait a minute (Retry-After) before retrying; clients behind one address share the limit.',
  TOO_MANY_AUTH_FAILURES:
    'Too many requests from this address failed authentication (no, malformed or unknown token). Wait a minute before retrying; until then every request from the address is refused.',
  TOO_MANY_EVENTS:
    "The project's clients sent more events than it may send per second (FLAGWIRE_EVENTS_PER_SECOND, docs/events.md: Limits). Nothing of the batch was counted; send it again, under the same batch id, after the seconds in Retry-After.",
  TOO_MANY_REPORTS:
    "The project's Unleash SDKs sent more reports (POST /api/client/metrics) in a minute than the node takes (600, docs/operations.md: Flag usage). Nothing of the report was counted; send it again after the seconds in Retry-After, as unleash-client does.",
  EVENT_STORAGE_FULL:
    'The project is at one of its event storage limits (docs/operations.md: Limits): its environment has as many subjects as it may keep (FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT), or its raw events take as many bytes as it may keep (FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT). Nothing of the batch was counted; the detail says which. Send it again, under the same batch id, after the seconds in Retry-After: when the oldest raw events expire, or an hour for subjects, which leave only when erased.',
  INTERNAL: 'An unexpected error on the server. It has been logged; retry, and report it if it persists.',
  STORE_UNAVAILABLE:
    'The change could not be written (storage full or read-only, PostgreSQL unreachable when it is the system of record or not answering within the write timeout, or the server is stopping). Nothing was changed; retry after the time in Retry-After. Only if PostgreSQL went away during the commit itself and did not come back within 30 seconds does the detail say the outcome is unknown: read the record back before retrying.',
  STORE_BUSY:
    "The change could not be committed within the write timeout (FLAGWIRE_WRITE_TIMEOUT_MS, 10 s by default), usually because another process (a console command) holds the data file's write lock. Nothing was changed, and the change will not be applied later: send it again after the time in Retry-After.",
  NOT_SIGNED_IN:
    'Web console only: the request has no session cookie, or its session expired or was ended by signing out (or by a new password). Sign in again.',
  SIGN_IN_FAILED:
    'Web console only: the e-mail address or the password is wrong (the answer does not say which). A user gets a password with `flagwire user password USER_ID`.',
  CROSS_SITE_REQUEST:
    "Web console only: a change was sent without this server's Origin or without the page's CSRF token, as a request forged by another site would be. Reload the console and retry.",
  SERVER_BUSY:
    'The server already holds as many request bodies in memory as it allows (FLAGWIRE_MAX_BUFFERED_BODY_BYTES), so this body was refused before it was read and the connection closed; or as many requests already wait for a revision (Flagwire-Min-Revision) as it allows. Nothing was changed; retry after the time in Retry-After (a second).',
  REVISION_NOT_REACHED:
    "The request's Flagwire-Min-Revision header asked for a revision this node's copy did not have within the wait (FLAGWIRE_MIN_REVISION_WAIT_MS, 2 s by default): the node is behind PostgreSQL (or cannot reach it), or the revision is not one the system of record has made yet. Nothing was read or changed. Retry after the time in Retry-After, possibly on another node; send only revisions that a Flagwire-Revision header gave.",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

export function renderDocsPage(): string {
  const sections = (Object.keys(kErrors) as ErrorCode[]).map((code) => {
    const { status, title, anchor } = kErrors[code];
    return `<section id="${anchor}"><h2>${status} ${escapeHtml(title)}</h2><p>${escapeHtml(kExplain[code])}</p></section>`;
  });
  const rateLimit =
    '<section id="rate-limited"><h2>429 (plain)</h2><p>More than the allowed Management API requests per minute came from this address. Wait for the time in Retry-After (at most a minute) before retrying.</p></section>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Flagwire API errors</title></head><body><h1>Flagwire API errors</h1>${sections.join('')}${rateLimit}</body></html>`;
}
