// Unleash's front-end API's shapes, as Unleash Edge serves them, as TypeBox values: the types the answers
// are built with (frontend-answer.ts) and the OpenAPI document's components (capability.ts). One source.
import { type Static, Type } from '../typebox.js';

const kText = { description: 'Text; a number or boolean counts as its JSON text' };

/** Unleash's context (context.ts says how Flagwire reads it). */
export const UnleashContext = Type.Object(
  {
    userId: Type.Optional(Type.String({ description: 'The targeting key: what Flagwire buckets by' })),
    sessionId: Type.Optional(Type.String({ description: 'The targeting key where there is no userId' })),
    environment: Type.Optional(Type.String({ description: "Ignored: the client key's environment is the one served" })),
    appName: Type.Optional(Type.String({ description: 'Read by no Flagwire rule' })),
    remoteAddress: Type.Optional(Type.String({ description: 'Read by no Flagwire rule' })),
    currentTime: Type.Optional(Type.String({ description: 'Read by no Flagwire rule' })),
    properties: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(kText), Type.Number(), Type.Boolean()]), {
        description: 'Attributes for audience matching; `cohort` is the cohort',
      }),
    ),
  },
  { additionalProperties: true, description: 'Any other key is a property, as Unleash reads it' },
);

/** The body of the POST routes: `{context}` as unleash-proxy-client sends it, or the context itself. */
export const UnleashContextRequest = Type.Object(
  { context: Type.Optional(UnleashContext) },
  { additionalProperties: true, description: '{"context": {...}} (unleash-proxy-client), or the context itself (Unleash Edge)' },
);

export const UnleashPayload = Type.Object({
  type: Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('json'), Type.Literal('csv')], {
    description: "csv only for a flag in Unleash's model whose variant has it (its payload is served as stored)",
  }),
  value: Type.String({ description: "The variant's value as text: a number's digits, an object's or a boolean's JSON" }),
});
export type UnleashPayload = Static<typeof UnleashPayload>;

export const UnleashVariant = Type.Object({
  name: Type.String({ description: 'The variant, or "disabled": none' }),
  enabled: Type.Boolean({ description: 'A variant is served' }),
  payload: Type.Optional(UnleashPayload),
});
export type UnleashVariant = Static<typeof UnleashVariant>;

export const UnleashToggle = Type.Object({
  name: Type.String({ description: "The flag's name" }),
  enabled: Type.Boolean({ description: "The Evaluation API's enabled for this context" }),
  variant: UnleashVariant,
  impressionData: Type.Boolean({
    description: "false, but for a flag in Unleash's model that asks for impression events (its impressionData)",
  }),
});
export type UnleashToggle = Static<typeof UnleashToggle>;

export const UnleashToggles = Type.Object({
  toggles: Type.Array(UnleashToggle, { description: 'By name, as Unleash Edge orders them' }),
});
