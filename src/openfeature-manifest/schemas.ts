// The shapes of the OpenFeature CLI's manifest API (open-feature/cli api/v0/sync.yaml; docs/openfeature-cli.md):
// its documented components as TypeBox values, which the routes declare and the writer checks bodies with.
// `float` is the one widening: the CLI's push sends it and its pull parses it, though the document's enum
// omits it (docs/decisions.md: OpenFeature CLI manifest API).
import { Type, type Static } from '../typebox.js';
import { Description, Name } from '../model/schemas.js';

export const kManifestTypes = ['boolean', 'string', 'integer', 'float', 'object'] as const;
export type ManifestType = (typeof kManifestTypes)[number];

const FlagType = Type.Union(
  kManifestTypes.map((t) => Type.Literal(t)),
  { description: "The flag's value type", 'x-error': `must be one of ${kManifestTypes.join(', ')}` },
);

const DefaultValue = Type.Union([Type.Boolean(), Type.String(), Type.Number(), Type.Record(Type.String(), Type.Unknown())], {
  description: "What the flag answers by default: its default variant's value (false for a boolean flag without variants)",
  'x-error': 'must be a boolean, a string, a number or a JSON object, of the flag type',
});

export const ManifestFlag = Type.Object(
  {
    key: Type.String({ description: "The flag's name in its project" }),
    name: Type.String({ description: 'The same as key: a Flagwire flag has one name' }),
    type: FlagType,
    description: Type.String(),
    defaultValue: DefaultValue,
  },
  { description: "One flag as the OpenFeature CLI's manifest says it" },
);
export type ManifestFlag = Static<typeof ManifestFlag>;

export const ManifestEnvelope = Type.Object(
  { flags: Type.Array(ManifestFlag) },
  { description: "The token's project's flags, ordered by key" },
);
export type ManifestEnvelope = Static<typeof ManifestEnvelope>;

export const ManifestFlagResponse = Type.Object(
  { flag: ManifestFlag, updatedAt: Type.String({ format: 'date-time' }) },
  { description: 'The flag as stored, and when it last changed' },
);
export type ManifestFlagResponse = Static<typeof ManifestFlagResponse>;

export const ManifestArchived = Type.Object(
  { message: Type.String(), archivedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) },
  { description: 'The flag was deleted (Flagwire keeps no archive: a deleted flag is gone)' },
);
export type ManifestArchived = Static<typeof ManifestArchived>;

const kWriteProperties = {
  key: Name,
  type: FlagType,
  name: Type.Optional(Type.String({ description: 'Ignored unless equal to key: a Flagwire flag has one name' })),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
};

export const ManifestFlagCreate = Type.Object(
  { ...kWriteProperties, defaultValue: DefaultValue },
  { additionalProperties: false, description: 'A new flag: its key, type, default value and description' },
);
export type ManifestFlagCreate = Static<typeof ManifestFlagCreate>;

export const ManifestFlagUpdate = Type.Object(
  { ...kWriteProperties, defaultValue: Type.Optional(DefaultValue) },
  { additionalProperties: false, description: "A flag's type, default value and description; key must be the path's" },
);
export type ManifestFlagUpdate = Static<typeof ManifestFlagUpdate>;

/**
 * The document's ErrorResponse (its `{"error": {"message", "status", "details"}}`, which the CLI's client
 * decodes), with Flagwire's title (code) and docs link beside: its schema takes members it does not name.
 */
export const ManifestErrorResponse = Type.Object(
  {
    error: Type.Object({
      message: Type.String({ description: 'Cause and fix' }),
      status: Type.Integer({ description: "The answer's HTTP status" }),
      code: Type.String({ description: "The error's title" }),
      docs: Type.String({ description: 'Link to the section of the docs page explaining it' }),
      details: Type.Optional(
        Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
          description: "A refused body's problems that name a field (400 only)",
        }),
      ),
    }),
  },
  { description: "A refusal in the OpenFeature CLI's ErrorResponse" },
);
export type ManifestErrorResponse = Static<typeof ManifestErrorResponse>;
