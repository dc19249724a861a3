// The flagd flag-definition document (flagd.dev/schema/v0/flags.json), as TypeBox values. The shape is
// checked here; what a schema cannot say (one type per flag's variants, a default variant that exists,
// rules built from known operators, $ref names that resolve) is checked by parse.ts.
//
//   {
//     "$evaluators": { "emailWithFaas": { "ends_with": [{ "var": "email" }, "@faas.com"] } },
//     "metadata": { "flagSetId": "checkout", "version": "3" },
//     "flags": {
//       "new-checkout": {
//         "state": "ENABLED",
//         "variants": { "on": true, "off": false },
//         "defaultVariant": "off",
//         "targeting": { "if": [{ "$ref": "emailWithFaas" }, "on"] },
//         "metadata": { "team": "payments" }
//       }
//     }
//   }
//
// Unknown properties are allowed where flagd allows them ("$schema", properties of a flag), and ignored.
import { type Static, Type, compiledOnUse } from '../typebox.js';

/** Metadata values: string, number or boolean (flag-set metadata and each flag's). */
export const FlagMetadata = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]));
export type FlagMetadata = Static<typeof FlagMetadata>;

/** A JSON object variant value (not an array, not null). */
export const ObjectValue = Type.Record(Type.String(), Type.Unknown());
export type ObjectValue = Static<typeof ObjectValue>;

export const VariantValue = Type.Union([Type.Boolean(), Type.String(), Type.Number(), ObjectValue]);
export type VariantValue = Static<typeof VariantValue>;

/** A rule (JsonLogic with flagd's operators); its operators are checked by compile-rule.ts. */
export const Targeting = Type.Record(Type.String(), Type.Unknown());
export type Targeting = Static<typeof Targeting>;

export const FlagDefinition = Type.Object({
  state: Type.Union([Type.Literal('ENABLED'), Type.Literal('DISABLED')]),
  variants: Type.Record(Type.String(), VariantValue, { minProperties: 1 }),
  /** Null or absent: the caller's own default value is served where the default variant would be. */
  defaultVariant: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  targeting: Type.Optional(Targeting),
  metadata: Type.Optional(FlagMetadata),
});
export type FlagDefinition = Static<typeof FlagDefinition>;

export const FlagDefinitionDocument = Type.Object({
  flags: Type.Record(Type.String(), FlagDefinition),
  /** Shared rules, used as {"$ref": "name"} anywhere in a flag's targeting (or in another evaluator). */
  $evaluators: Type.Optional(Type.Record(Type.String(), Targeting)),
  metadata: Type.Optional(FlagMetadata),
});
export type FlagDefinitionDocument = Static<typeof FlagDefinitionDocument>;

export const kFlagDefinitionDocument = compiledOnUse(FlagDefinitionDocument);

/** The value type of a flag, named as OpenFeature names them. */
export type FlagValueType = 'boolean' | 'string' | 'number' | 'object';

export function variantType(value: VariantValue): FlagValueType {
  return typeof value === 'object' ? 'object' : (typeof value as FlagValueType);
}
