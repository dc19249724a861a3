// Response shapes as TypeBox values, for the OpenAPI document. The code that builds these responses
// keeps its own TypeScript types (src/api/representation.ts, the eval bodies); the assertions at the
// bottom make the compiler refuse any drift between the two, in both directions.
import { Type, type Static } from '@sinclair/typebox';
import type { EnvironmentsFlag as EnvironmentsFlagType, FlatFlag as FlatFlagType, tokenDescription } from '../api/representation.js';
import type { ReadinessReport } from '../server/ready.js';

const Id = (description: string) => Type.String({ description });
const Millis = Type.Number({ description: 'Unix time in milliseconds' });

export const FlatFlag = Type.Object({
  id: Id('Flag id'),
  name: Type.String(),
  kind: Type.Union([Type.Literal('flag'), Type.Literal('groupflag')]),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  updatedAt: Millis,
  enabled: Type.Boolean(),
  trafficPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
  cohorts: Type.Array(Type.String(), { description: 'Effective cohort list (an environment override, else the flag-wide list)' }),
  audienceId: Type.Union([Type.String(), Type.Null()]),
  environment: Type.Optional(Type.String({ description: 'Set when a group flag is shown for one environment' })),
}, { description: 'A flag in flat form: a single-environment flag, or one environment of a group flag' });

export const EnvironmentEntry = Type.Object({
  enabled: Type.Boolean(),
  trafficPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
  cohorts: Type.Array(Type.String()),
  audienceId: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Millis,
});

export const EnvironmentsFlag = Type.Object({
  id: Id('Flag id'),
  name: Type.String(),
  kind: Type.Literal('groupflag'),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  updatedAt: Millis,
  environments: Type.Record(Type.String(), EnvironmentEntry),
}, { description: 'A group flag without `env`: one entry per environment of the project' });

export const FlagRepresentation = Type.Union([FlatFlag, EnvironmentsFlag]);
export const FlagList = Type.Object({ flags: Type.Array(FlagRepresentation) });
export const PatchResult = Type.Object({
  changed: Type.Boolean({ description: 'false when the patch set every key to the value it had' }),
  flag: FlatFlag,
});

export const TokenDescription = Type.Object({
  id: Id('Token id'),
  name: Type.String(),
  project: Type.Object({ id: Type.String(), name: Type.String() }),
  permission: Type.Union([Type.Literal('read'), Type.Literal('write')]),
  environments: Type.Array(Type.String(), { description: 'Environments the token is limited to; [] means all' }),
  expiresAt: Type.Number({ description: 'Unix ms; 0 means never' }),
});

export const ErrorEnvelope = Type.Object({
  error: Type.String({ description: 'The error\'s title' }),
  detail: Type.String({ description: 'Cause and fix' }),
  docs: Type.String({ description: 'Link to the section of the docs page explaining it' }),
}, { description: 'Management API error envelope' });

export const EvalError = Type.Object({
  error: Type.String({ description: 'The error\'s title' }),
  detail: Type.String({ description: 'Cause and fix' }),
}, { description: 'Evaluation API error body' });

export const EvalFlag = Type.Object({ id: Type.String(), name: Type.String(), enabled: Type.Boolean() });
export const EvalFlagList = Type.Array(EvalFlag, { description: 'Every flag of the project, in creation order' });

export const Health = Type.Object({ status: Type.Literal('ok'), storeVersion: Type.Integer() });

export const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  ready: Type.Boolean(),
  store: Type.Boolean({ description: 'The data file is open and readable' }),
  writer: Type.Union([Type.Literal('ok'), Type.Literal('busy')], {
    description: 'busy: a change has waited over a second for the writer thread (another process holds the write lock); writes may answer 503 Storage busy, evaluation is unaffected',
  }),
  workers: Type.Object({
    answered: Type.Integer({ description: 'Eval workers that answered a probe' }),
    total: Type.Integer(),
  }),
});

// ---- drift checks: each schema's Static type and the type the code builds must be the same ----
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function same<A, B>(value: Same<A, B>): Same<A, B> {
  return value;
}
same<Static<typeof FlatFlag>, FlatFlagType>(true);
same<Static<typeof EnvironmentsFlag>, EnvironmentsFlagType>(true);
same<Static<typeof TokenDescription>, ReturnType<typeof tokenDescription>>(true);
same<Omit<Static<typeof Readiness>, 'status'>, ReadinessReport>(true);
