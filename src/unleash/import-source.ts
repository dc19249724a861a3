// What `flagwire import unleash` reads (issue 60, item 4): Unleash's feature export, the JSON that
// `POST /api/admin/features-batch/export` answers and Unleash's "Export" button writes (one environment
// per export; Unleash 5.3 and later), as TypeBox values; and the one shape both sources are read into
// (import-reader.ts), which the plan maps (import-plan.ts). The export's schema is Unleash's
// exportResultSchema (src/lib/openapi/spec/export-result-schema.ts in Unleash's repository), read
// loosely: fields Flagwire does not read are let through, so a newer Unleash's export still reads.
import { type Static, Type } from '../typebox.js';

const Text = Type.String({ maxLength: 100_000 });
const List = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { maxItems: 100_000 });

export const ExportConstraint = Type.Object({
  contextName: Text,
  operator: Text,
  value: Type.Optional(Text),
  values: Type.Optional(List(Text)),
  inverted: Type.Optional(Type.Boolean()),
  caseInsensitive: Type.Optional(Type.Boolean()),
});
export type ExportConstraint = Static<typeof ExportConstraint>;

const Payload = Type.Object({ type: Text, value: Text });

export const ExportVariant = Type.Object({
  name: Text,
  weight: Type.Number(),
  weightType: Type.Optional(Text),
  stickiness: Type.Optional(Text),
  payload: Type.Optional(Payload),
  overrides: Type.Optional(List(Type.Object({ contextName: Text, values: List(Text) }))),
});
export type ExportVariant = Static<typeof ExportVariant>;

export const ExportStrategy = Type.Object({
  name: Text,
  featureName: Type.Optional(Text),
  title: Type.Optional(Type.Union([Text, Type.Null()])),
  disabled: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  sortOrder: Type.Optional(Type.Number()),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Union([Text, Type.Number()]))),
  constraints: Type.Optional(List(ExportConstraint)),
  segments: Type.Optional(List(Type.Number())),
  variants: Type.Optional(List(ExportVariant)),
});
export type ExportStrategy = Static<typeof ExportStrategy>;

const ExportFeature = Type.Object({
  name: Text,
  project: Text,
  description: Type.Optional(Type.Union([Text, Type.Null()])),
  type: Type.Optional(Text),
  stale: Type.Optional(Type.Boolean()),
  impressionData: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean()),
});

const ExportFeatureEnvironment = Type.Object({
  featureName: Text,
  environment: Text,
  enabled: Type.Boolean(),
  variants: Type.Optional(List(ExportVariant)),
});

const ExportDependency = Type.Object({ feature: Text, enabled: Type.Optional(Type.Boolean()), variants: Type.Optional(List(Text)) });

/** Unleash's feature export of one environment. */
export const UnleashExport = Type.Object(
  {
    features: List(ExportFeature),
    featureStrategies: List(ExportStrategy),
    featureEnvironments: Type.Optional(List(ExportFeatureEnvironment)),
    featureTags: Type.Optional(List(Type.Object({ featureName: Text, tagType: Type.Optional(Text), tagValue: Type.Optional(Text) }))),
    /** Only each segment's id and name: an export does not carry a segment's constraints. */
    segments: Type.Optional(List(Type.Object({ id: Type.Number(), name: Text }))),
    tagTypes: List(Type.Object({ name: Text })),
    dependencies: Type.Optional(List(Type.Object({ feature: Text, dependencies: List(ExportDependency) }))),
  },
  { description: "Unleash's feature export (POST /api/admin/features-batch/export) of one environment" },
);
export type UnleashExport = Static<typeof UnleashExport>;

/** A segment as the admin API lists it (GET /api/admin/segments): with its constraints. */
export const AdminSegments = Type.Object({
  segments: List(Type.Object({ id: Type.Number(), name: Text, constraints: List(ExportConstraint) })),
});

export const AdminProjects = Type.Object({
  projects: List(Type.Object({ id: Text, name: Text, description: Type.Optional(Type.Union([Text, Type.Null()])) })),
});

/** GET /api/admin/environments/project/{id}: the environments a project has enabled. */
export const AdminProjectEnvironments = Type.Object({
  environments: List(Type.Object({ name: Text, enabled: Type.Optional(Type.Boolean()), sortOrder: Type.Optional(Type.Number()) })),
});

// The shape both sources are read into: everything of an instance the import maps or reports.

export interface SourceSegment {
  id: number;
  name: string;
  /** null: not known (an export file names a segment without its constraints). */
  constraints: ExportConstraint[] | null;
}

export interface SourceEnvironmentConfig {
  enabled: boolean;
  /** The strategies that evaluate, in Unleash's order (sortOrder); disabled ones are left out. */
  strategies: ExportStrategy[];
  variants: ExportVariant[];
}

export interface SourceFeature {
  name: string;
  project: string;
  description: string;
  /** Unleash's tags, `type:value`. */
  tags: string[];
  type: string;
  stale: boolean;
  impressionData: boolean;
  dependencies: Static<typeof ExportDependency>[];
  /** By environment name; an environment of the project with no entry is off there. */
  environments: Record<string, SourceEnvironmentConfig>;
}

export interface SourceProject {
  id: string;
  name: string;
  description: string;
  /** The environments it has, in Unleash's order. */
  environments: string[];
}

export interface UnleashSource {
  /** Where it was read: the URL, or the files. */
  from: string;
  projects: SourceProject[];
  features: SourceFeature[];
  segments: SourceSegment[];
}
