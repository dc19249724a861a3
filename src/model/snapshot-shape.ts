// The native snapshot of one project environment (issue 44, contract 4): what Flagwire's evaluation
// engine needs to answer that environment's flags exactly as the server does, served by the snapshots
// capability's GET /v1/snapshots/{project_id} (src/snapshots/routes.ts) and compiled in-process by the
// Flagwire OpenFeature provider (src/provider/compile.ts) with the engine's own functions. One shape for
// both, as TypeBox, below them both: the provider imports no capability.
//
// Each flag carries its state in the snapshot's environment as the engine resolves it (effectiveState:
// a group flag's environment with its effective cohorts; a single flag's own state), its bucketing, and
// its typed variants. Audiences are those of the project its states name; a state naming one that is
// missing keeps its audienceId and never matches, as on the server.
import { FlagMetadata, Targeting, VariantValue } from '../targeting/definition.js';
import { CloneType, type Static, Type } from '../typebox.js';
import { UnleashModel } from './unleash-model.js';

/**
 * The snapshot route's header naming the project's configuration tag (src/evaluation/engine/config-tag.ts),
 * which its OFREP bulk answers' ETags start with: an edge (src/edge) tags its answers as the server does.
 */
export const kConfigTagHeader = 'Flagwire-Config-Tag';

const kNullableString = Type.Union([Type.String(), Type.Null()]);

export const SnapshotTyped = Type.Object(
  {
    variants: Type.Record(Type.String(), VariantValue),
    defaultVariant: kNullableString,
    targeting: Targeting,
    metadata: Type.Optional(FlagMetadata),
  },
  { description: "The state's typed variants (docs/design.md §2b)" },
);

export const SnapshotState = Type.Object({
  enabled: Type.Boolean(),
  trafficPercentage: Type.Number({ minimum: 0, maximum: 100 }),
  audienceId: kNullableString,
  cohorts: Type.Array(Type.String(), { description: 'The effective cohort list (an environment override, else the flag-wide list)' }),
  typed: Type.Optional(SnapshotTyped),
  experiment: Type.Optional(Type.String({ description: "The experiment the state's answers belong to (issue 58); absent: none" })),
  unleash: Type.Optional(
    CloneType(UnleashModel, { description: "The state's Unleash model (issue 60; docs/design.md §2d), as stored; absent: none" }),
  ),
});

export const SnapshotFlag = Type.Object({
  id: Type.String(),
  name: Type.String(),
  bucketing: Type.Optional(
    Type.Literal('fractional', { description: "Absent: design §2's murmur3 mod 100; fractional: flagd's fractional point (issue 44)" }),
  ),
  updatedAt: Type.Integer({ description: "The flag's version (Unix ms)" }),
  state: SnapshotState,
});

export const SnapshotAudience = Type.Object({
  id: Type.String(),
  name: Type.String(),
  updatedAt: Type.Integer({ description: "The audience's version (Unix ms)" }),
  rules: Type.Array(Type.Object({ attribute: Type.String(), values: Type.Array(Type.String()) })),
});

export const Snapshot = Type.Object(
  {
    projectId: Type.String(),
    environment: Type.Union([Type.String(), Type.Null()], { description: 'null: a single-environment project' }),
    revision: Type.Integer({ minimum: 0, description: 'The store revision it was read at (Flagwire-Revision)' }),
    audiencesAllowed: Type.Boolean({
      description: "The organisation's plan allows audiences now (a state applying one is refused otherwise)",
    }),
    audiencesUntil: Type.Union([Type.Integer(), Type.Null()], {
      description: "When audiences stop being allowed with no change to announce (a Teams trial's end, Unix ms); null: no such time",
    }),
    flags: Type.Array(SnapshotFlag, { description: 'Every flag of the project, in creation order' }),
    audiences: Type.Array(SnapshotAudience, { description: "The project's audiences the states name" }),
  },
  { description: 'One project environment as the evaluation engine reads it (docs/provider.md)' },
);
export type Snapshot = Static<typeof Snapshot>;
export type SnapshotFlag = Static<typeof SnapshotFlag>;
export type SnapshotAudience = Static<typeof SnapshotAudience>;
