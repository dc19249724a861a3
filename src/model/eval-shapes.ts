// The Evaluation API's 200 shapes, as TypeBox values: the answer bodies are built from them
// (src/evaluation/engine/bodies.ts) and the OpenAPI document declares them (src/routes/route-table.ts).
import { Type, type Static } from '../typebox.js';

export const EvalFlag = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  variant: Type.Optional(
    Type.String({ description: "Only on a flag with typed variants, when it serves one: the variant's name (docs/design.md §2b)" }),
  ),
  value: Type.Optional(Type.Unknown({ description: "Only with `variant`: the variant's value (boolean, string, number or object)" })),
  unleashPayloadType: Type.Optional(
    Type.String({
      description:
        "Only on a flag in Unleash's model whose variant has a payload: its type (string, json, csv, number; docs/api.md: Unleash's model)",
    }),
  ),
  unleashPayload: Type.Optional(Type.String({ description: "With unleashPayloadType: the payload's text, as stored" })),
  experimentKey: Type.Optional(
    Type.String({
      description: "Only while the flag (environment) runs an experiment (issue 58): the experiment's key (docs/api.md: Experiments)",
    }),
  ),
  inExperiment: Type.Optional(
    Type.Boolean({
      description:
        'With experimentKey: whether this answer counts as an exposure (a percentage split or a rule allocated the caller); false for a disabled flag, a cohort override, an audience or a static default, and an error',
    }),
  ),
});
export type EvalFlag = Static<typeof EvalFlag>;
export const EvalFlagList = Type.Array(EvalFlag, { description: 'Every flag of the project, in creation order' });
export type EvalFlagList = Static<typeof EvalFlagList>;
