// The shapes client keys take and answer with, as TypeBox values: the single source of their types and
// of the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';
import { kLimits } from '../model/schemas.js';
import { type ClientKey, kClientKeyUses } from './client-key.js';

const kUse = Type.Union(
  kClientKeyUses.map((use) => Type.Literal(use)),
  { 'x-error': `must be one of ${kClientKeyUses.join(', ')}` },
);

/** The body of POST /api/v1/client-keys. */
export const ClientKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: kLimits.nameLength, description: "The key's name, shown in lists and the audit log" }),
    environment: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The environment its answers and events belong to: required on a multi-environment project, refused on a single one',
      }),
    ),
    uses: Type.Array(kUse, {
      minItems: 1,
      maxItems: kClientKeyUses.length,
      uniqueItems: true,
      description: "What the key may be used for: events (POST /ofrep/v1/events), frontend (Unleash's front-end API, /api/frontend)",
      'x-error': `must be a non-empty array of distinct uses: ${kClientKeyUses.join(', ')}`,
    }),
  },
  { additionalProperties: false },
);
export type ClientKeyCreate = Static<typeof ClientKeyCreate>;

export const ClientKeyBody = Type.Object({
  id: Type.String({ description: 'ck_…' }),
  name: Type.String(),
  environment: Type.Union([Type.String(), Type.Null()], { description: 'Its environment; null on a single-environment project' }),
  uses: Type.Array(kUse),
  createdAt: Type.Integer(),
  createdBy: Type.String({ description: 'Who made it, as the audit log names them (token:…, user:…, console)' }),
  createdByName: Type.String(),
  revokedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When it was revoked; null while it works' }),
});
export type ClientKeyBody = Static<typeof ClientKeyBody>;

export const ClientKeyCreated = Type.Composite([
  ClientKeyBody,
  Type.Object({ secret: Type.String({ description: 'The key (fwc_…) a browser or app sends as its bearer: shown only now' }) }),
]);
export type ClientKeyCreated = Static<typeof ClientKeyCreated>;

export const ClientKeyList = Type.Object({
  clientKeys: Type.Array(ClientKeyBody, { description: "The project's client keys, revoked ones too, oldest first" }),
});
export type ClientKeyList = Static<typeof ClientKeyList>;

export const ClientKeyRevoked = Type.Object({ id: Type.String(), revokedAt: Type.Integer() });
export type ClientKeyRevoked = Static<typeof ClientKeyRevoked>;

/** A key as every answer but its creation's shows it: without its hash, or its project (the token's). */
export function clientKeyView(key: ClientKey): ClientKeyBody {
  const { secretHash: _hash, projectId: _project, ...view } = key;
  return view;
}
