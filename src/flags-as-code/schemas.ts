// The shapes flags as code answers with, as TypeBox values: the single source of their types and of
// the OpenAPI document's components (the file itself is flag-file.ts's FlagFile).
import { type Static, Type } from '../typebox.js';

export const FieldChange = Type.Object({
  path: Type.String({
    description:
      'From the flag (or audience, or shared fragment, or experiment): `trafficPercentage`, `environments.production.variants`, `rules`, `rule`, `plannedSubjects`',
  }),
  before: Type.Unknown({ description: 'null where there is none (a create; a boolean state has no variants)' }),
  after: Type.Unknown(),
});
export type FieldChange = Static<typeof FieldChange>;

export const PlannedChange = Type.Object({
  op: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
  kind: Type.Union([
    Type.Literal('environment'),
    Type.Literal('audience'),
    Type.Literal('fragment'),
    Type.Literal('flag'),
    Type.Literal('experiment'),
  ]),
  name: Type.String({ description: "The thing's name; an experiment's key" }),
  environment: Type.Optional(Type.String({ description: "An experiment's environment (absent in a single-environment project)" })),
  fields: Type.Array(FieldChange, { description: 'Every field a create sets, or an update changes; [] for a delete or an environment' }),
  consoleOnly: Type.Boolean({
    description:
      "Only the console may make it (deleting a flag; a flag's description, tags or flag-wide cohort list; environments; audiences): the Management API plans it and refuses to apply it",
  }),
});
export type PlannedChange = Static<typeof PlannedChange>;

export const PlanResult = Type.Object({
  projectId: Type.String(),
  revision: Type.Integer({
    description: "The project's revision the plan was made at (after an apply: the revision it left); apply's ifRevision takes it",
  }),
  changed: Type.Boolean({ description: 'Whether applying the file changes (changed) anything' }),
  changes: Type.Array(PlannedChange),
  digest: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description:
      "SHA-256 (hex) of the project id and `changes`: the same changes give the same digest; apply's ifPlan takes it, so that what is applied is the plan that was reviewed",
  }),
  notInFile: Type.Array(Type.String(), {
    description:
      'Flags of the project the file does not name, by name, and, where the file declares experiments, its experiments the file does not (`experiment KEY`, `experiment KEY in ENV`): kept (prune deletes them)',
  }),
  ignored: Type.Array(Type.String(), { description: 'Parts of the file the Management API leaves to the console, left as they are' }),
});
export type PlanResult = Static<typeof PlanResult>;
