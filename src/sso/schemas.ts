// Single sign-on's request and answer shapes as TypeBox values (docs/sso.md, docs/api.md): what an Owner
// sends to change an organisation's OIDC settings (each key optional: what is left out stays as it is),
// and what every surface answers with (never the client secret).
import { kRoles } from '../model/accounts.js';
import { type Static, Type } from '../typebox.js';

/** Bounds on what one organisation's settings hold. */
export const kMaxScopes = 20;
export const kMaxGroupRoles = 100;
const kMaxText = 256;

const Text = Type.String({ minLength: 1, maxLength: kMaxText, 'x-error': `must be a non-empty string of at most ${kMaxText} characters` });
const RoleName = Type.Union(
  kRoles.map((r) => Type.Literal(r)),
  { 'x-error': `must be one of ${kRoles.join(', ')}` },
);

export const SsoSettingsChange = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048, 'x-error': "must be the identity provider's issuer URL" }),
    clientId: Text,
    clientSecret: Type.String({ minLength: 1, maxLength: 1024, 'x-error': 'must be a non-empty string of at most 1024 characters' }),
    scopes: Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,64}$' }), {
      maxItems: kMaxScopes,
      'x-error': `must be an array of at most ${kMaxScopes} OAuth scope names (RFC 6749 §3.3)`,
    }),
    groupsClaim: Type.String({
      pattern: '^[A-Za-z0-9_:./-]{1,128}$',
      'x-error': 'must be a claim name of 1 to 128 letters, digits or _:./-',
    }),
    groupRoles: Type.Record(Text, RoleName, {
      maxProperties: kMaxGroupRoles,
      'x-error': `must map at most ${kMaxGroupRoles} group names to roles (${kRoles.join(', ')})`,
    }),
    createMembers: Type.Boolean({ 'x-error': 'must be true or false' }),
    ssoOnly: Type.Boolean({ 'x-error': 'must be true or false' }),
    breakGlassUserId: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
      'x-error': 'must be the user id of an Owner who signs in with a password, or null',
    }),
  },
  { additionalProperties: false },
);

/** Each key optional: a change names what it changes. */
export const SsoSettingsPatch = Type.Partial(SsoSettingsChange, { additionalProperties: false });
export type SsoSettingsPatch = Static<typeof SsoSettingsPatch>;

export const SsoSettingsView = Type.Object({
  orgId: Type.String(),
  enabled: Type.Boolean(),
  issuer: Type.Union([Type.String(), Type.Null()]),
  clientId: Type.Union([Type.String(), Type.Null()]),
  clientSecretSet: Type.Boolean(),
  scopes: Type.Array(Type.String()),
  groupsClaim: Type.String(),
  groupRoles: Type.Record(Type.String(), Type.String()),
  createMembers: Type.Boolean(),
  ssoOnly: Type.Boolean(),
  breakGlassUserId: Type.Union([Type.String(), Type.Null()]),
  /** Where the organisation's people start a sign-in (GET: the browser is sent to the identity provider). */
  signInPath: Type.String(),
  /** The redirect URI to register at the identity provider. */
  redirectPath: Type.String(),
  updatedAt: Type.Union([Type.Number(), Type.Null()]),
});
export type SsoSettingsView = Static<typeof SsoSettingsView>;

export const SsoRemoved = Type.Object({ orgId: Type.String(), removed: Type.Boolean() });
