// SCIM's own errors (RFC 7644 §3.12), in one table: the status each answers with and its scimType
// (RFC 7644 Table 9; none for a 404, a 412 or a 401). A SCIM refusal made in the writer crosses the thread
// as a FlagwireError whose detail carries its key (`scim:<key>: <detail>`), the only thing that crosses
// besides the code; the SCIM route reads it back (scimErrorOf) and answers in SCIM's envelope, never in
// the Management API's.
import { FlagwireError } from '../errors.js';
import { Type, type Static } from '../typebox.js';

export const kScimErrors = {
  invalidFilter: { status: 400, scimType: 'invalidFilter' },
  tooMany: { status: 400, scimType: 'tooMany' },
  uniqueness: { status: 409, scimType: 'uniqueness' },
  mutability: { status: 400, scimType: 'mutability' },
  invalidSyntax: { status: 400, scimType: 'invalidSyntax' },
  invalidPath: { status: 400, scimType: 'invalidPath' },
  noTarget: { status: 400, scimType: 'noTarget' },
  invalidValue: { status: 400, scimType: 'invalidValue' },
  notFound: { status: 404, scimType: null },
  preconditionFailed: { status: 412, scimType: null },
  unauthorized: { status: 401, scimType: null },
  methodNotAllowed: { status: 405, scimType: null },
  payloadTooLarge: { status: 413, scimType: null },
} as const;

export type ScimErrorKey = keyof typeof kScimErrors;

export const kScimErrorSchema = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 §3.12's error body: `status` is a string there. */
export const ScimErrorBody = Type.Object({
  schemas: Type.Array(Type.Literal(kScimErrorSchema)),
  status: Type.String(),
  scimType: Type.Optional(Type.String()),
  detail: Type.String(),
});
export type ScimErrorBody = Static<typeof ScimErrorBody>;

const kTagged = /^scim:([A-Za-z]+): ([\s\S]*)$/;

/** A SCIM refusal, thrown wherever it is found (the route, the writer): changes nothing, answered in SCIM's envelope. */
export function scimRefusal(key: ScimErrorKey, detail: string): FlagwireError {
  const status = kScimErrors[key].status;
  const code = status === 404 ? 'NOT_FOUND' : status === 401 ? 'UNKNOWN_TOKEN' : 'INVALID_REQUEST';
  return new FlagwireError(code, `scim:${key}: ${detail}`);
}

/** What a FlagwireError answers on the SCIM API: its own refusal read back, or the service's status with its detail. */
export function scimErrorOf(err: FlagwireError): { status: number; body: ScimErrorBody } {
  const tagged = kTagged.exec(err.detail);
  if (tagged !== null && Object.hasOwn(kScimErrors, tagged[1]!)) {
    const { status, scimType } = kScimErrors[tagged[1] as ScimErrorKey];
    return { status, body: errorBody(status, scimType, tagged[2]!) };
  }
  // The service's own refusals (the store busy or unavailable, a body over the limit, the lockout).
  return { status: err.status, body: errorBody(err.status, null, err.detail) };
}

function errorBody(status: number, scimType: string | null, detail: string): ScimErrorBody {
  return { schemas: [kScimErrorSchema], status: String(status), ...(scimType === null ? {} : { scimType }), detail };
}
