// What a client key is (records.ts keeps them): declared apart from the store, so that the web console's
// browser code can read its shape (src/web-console/api/answers.ts) without any of the store's modules.

/**
 * What a client key may be used for: `events`, sending exposures and outcomes (POST /ofrep/v1/events);
 * `frontend`, Unleash's front-end API (src/unleash/hosted-routes.ts: evaluated answers for one context,
 * never a rule).
 */
export const kClientKeyUses = ['events', 'frontend'] as const;
export type ClientKeyUse = (typeof kClientKeyUses)[number];

export interface ClientKey {
  /** `ck_` and random characters: what lists show and revoke takes. */
  id: string;
  projectId: string;
  name: string;
  /** The environment its answers and events belong to: a multi-environment project's; null on a single one. */
  environment: string | null;
  uses: ClientKeyUse[];
  /** Hex SHA-256 of the secret (src/model/ids.ts hashSecret); the secret itself is never stored. */
  secretHash: string;
  createdAt: number;
  /** Who made it, as the audit log names them (`token:<id>`, `user:<id>`, `console`), and their name. */
  createdBy: string;
  createdByName: string;
  revokedAt: number | null;
}
