// A flag's version as an entity tag (docs/api.md, "Changing a flag only if unchanged"): its GET answers
// it as ETag, and a change sent with it as If-Match is refused if the flag has changed since. One tag
// names the whole stored flag, every environment's state with it: an environment's effective state
// reads the flag-wide cohorts, so a tag of one environment alone could miss a change that moves it.
import { FlagwireError } from '../errors.js';
import { etag, matchesIfMatch } from '../http/entity-tags.js';
import type { Flag } from '../model/flags.js';

/**
 * The flag's entity tag: a hash of the stored record, so it changes exactly when the stored flag does
 * (any field, any environment) and never when only its usage counts move. Strong and opaque.
 */
export function flagEtag(flag: Flag): string {
  return etag('flag', Buffer.from(JSON.stringify(flag))).toString('latin1');
}

/**
 * Refuses (412) a change sent with an If-Match that does not name `flag` as stored now; '' (no header)
 * is no precondition. Called by the writer's command, in the transaction that writes, after the flag
 * is found in the caller's project: two changes sent with the same tag, one of them lands.
 */
export function requireFlagUnchanged(flag: Flag, ifMatch: string): void {
  if (ifMatch === '' || matchesIfMatch(ifMatch, flagEtag(flag))) return;
  throw new FlagwireError(
    'PRECONDITION_FAILED',
    `Flag "${flag.name}" has changed since you read it (If-Match names another version; it is now ${flagEtag(flag)}). Nothing was applied. Read it again, and send your change with its new ETag if it is still right.`,
  );
}
