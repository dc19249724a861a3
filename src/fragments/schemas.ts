// The shapes shared fragments take and answer with, as TypeBox values: the single source of their types
// and of the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';

/** A fragment's name: flagd's `$evaluators` key (docs/decisions.md: Shared fragments says why so narrow). */
export const kFragmentNamePattern = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';

const kName = Type.String({
  pattern: kFragmentNamePattern,
  description: 'What a rule names it by, {"$ref": NAME}: a letter, then letters, digits, _ or -, 64 at most',
  'x-error': 'must be a letter, then letters, digits, _ or -, 64 characters at most',
});

const kRule = Type.Record(Type.String(), Type.Unknown(), {
  description: "A JsonLogic rule with flagd's operators (one operator), without $ref",
  'x-error': 'must be a JsonLogic rule (a JSON object)',
});

/** The body of POST /api/v1/fragments. */
export const FragmentCreate = Type.Object({ name: kName, rule: kRule }, { additionalProperties: false });
export type FragmentCreate = Static<typeof FragmentCreate>;

/** The body of PATCH /api/v1/fragments/{name}. */
export const FragmentUpdate = Type.Object({ rule: kRule }, { additionalProperties: false });
export type FragmentUpdate = Static<typeof FragmentUpdate>;

export const FragmentBody = Type.Object({
  name: Type.String(),
  rule: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Type.Integer({ description: 'Unix ms' }),
  updatedAt: Type.Integer({ description: 'Unix ms' }),
});
export type FragmentBody = Static<typeof FragmentBody>;

export const FragmentList = Type.Object({ fragments: Type.Array(FragmentBody, { description: "The project's fragments, by name" }) });
export type FragmentList = Static<typeof FragmentList>;

export const FragmentDeleted = Type.Object({ name: Type.String(), deleted: Type.Literal(true) });
export type FragmentDeleted = Static<typeof FragmentDeleted>;
