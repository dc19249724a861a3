// A relay's answer to every Management API request under /api/v1 and every web console request: 409
// RELAY_READ_ONLY in the spec's error envelope, naming the upstream where changes (and the console) are.
// Nothing of the request is read: a relay holds no users, sessions or audit, and refuses reads too, so
// no client mistakes its copy for the system of record (docs/decisions.md: the relay).
import type { HttpResponse } from 'uWebSockets.js';
import type { Config } from '../config.js';
import { errorEnvelope, relayReadOnlyError } from '../errors.js';
import { type FollowState, primaryUrlOf } from '../model/follow-state.js';
import { send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import type { StoreRevision } from '../store/interfaces.js';

/**
 * Answers 409 at once, naming the primary (`relay`: the relay's follow now; the upstream of a relay of a
 * relay is not where changes go). `config` is the relay's (its upstream set), read per answer: the docs
 * URL names the port once it listens. `revision`: the Management API names its copy's revision on every
 * answer (Flagwire-Revision); the console's answers name none.
 */
export function answerRelayReadOnly(
  res: HttpResponse,
  config: Readonly<Config>,
  relay: FollowState | null,
  revision: StoreRevision | null,
): void {
  if (config.upstream === null) throw new Error('only a relay refuses as a relay');
  const primary = relay === null ? config.upstream.url : primaryUrlOf(relay);
  const body = JSON.stringify(errorEnvelope(relayReadOnlyError(primary), config.docsUrl));
  send(res, 409, body, 'application/json', revision === null ? undefined : revisionHeaders(revision));
}
