// Whether a SCIM request holds its organisation's live secret (`Authorization: Bearer fws_…`): the
// settings it opens, so that every read and write of the request reaches that organisation alone. A
// missing, malformed or unknown secret is a 401 and counts toward the address's failed-authentication
// lockout, as a token does (the node has one lockout, whatever takes a credential).
import type { AuthFailures } from '../http/auth-failures.js';
import { hashSecret } from '../model/ids.js';
import type { StoreReader } from '../store/interfaces.js';
import { bearerSecret } from '../tokens/auth.js';
import { scimRefusal } from './errors.js';
import { kScimSettingsRecords, type ScimSettings } from './records.js';
import { kScimSecretPrefix } from './scim-commands.js';

const kSecretShape = new RegExp(`^${kScimSecretPrefix}_[A-Za-z0-9]{16,128}$`);

export class ScimAccess {
  constructor(
    private readonly store: StoreReader,
    private readonly authFailures: AuthFailures,
  ) {}

  /** The settings `authorization` opens, from address `ip` at `now`; or the refusal (thrown). The caller renews the store's snapshot first. */
  grant(authorization: string, ip: string, now: number): ScimSettings {
    this.authFailures.check(ip, now);
    try {
      const secret = bearerSecret(authorization);
      if (!kSecretShape.test(secret))
        throw scimRefusal(
          'unauthorized',
          `Send the organisation's SCIM secret as "Authorization: Bearer ${kScimSecretPrefix}_<secret>" (flagwire scim enable).`,
        );
      const [settings] = this.store.listKeyedBy(kScimSettingsRecords, 'secret', hashSecret(secret));
      if (settings === undefined)
        throw scimRefusal(
          'unauthorized',
          'This SCIM secret is not one of this service: it was rotated, SCIM was disabled, or it never was.',
        );
      return settings;
    } catch (err) {
      this.authFailures.record(ip, now);
      throw err;
    }
  }
}
