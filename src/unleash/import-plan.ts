// The importer's plan (issue 60, item 4): an Unleash instance (import-source.ts) as one Flagwire flag file
// per Unleash project, planned by flags as code against the project of that name in the organisation
// (or against an empty one, to be created), and the report of everything that is not carried, named per
// flag. Flags as code is reused whole, not copied: a file is what it already checks, plans, prints and
// applies change by change through the writer commands (src/flags-as-code), so an import is what
// `flagwire plan`/`apply` of that file would be, and the files are what a user may keep as code.
import { fileDocument, parseFlagFile } from '../flags-as-code/flag-file.js';
import { planChanges } from '../flags-as-code/plan.js';
import { byCodePoint, type ModelGroupFlag, type ModelState, type ProjectModel, projectModel } from '../flags-as-code/project-model.js';
import type { PlannedChange } from '../flags-as-code/schemas.js';
import { FlagwireError } from '../errors.js';
import type { Project } from '../model/projects.js';
import { sameName } from '../model/input-checks.js';
import { kLimits } from '../model/schemas.js';
import type { StoreReader } from '../store/interfaces.js';
import { listedProblems } from '../targeting/problems.js';
import { mapEnvironment, type Refusal } from './import-mapping.js';
import type { SourceFeature, SourceProject, SourceSegment, UnleashSource } from './import-source.js';
import { listOrgProjects } from '../model/records/project-records.js';
import { getOrg } from '../model/records/org-records.js';
import { type FlagType, kFlagTypes } from '../model/flags.js';

/** One Unleash project as a Flagwire project. */
export interface ProjectImport {
  /** Unleash's project id. */
  unleashProject: string;
  /** The Flagwire project's name: Unleash's project name. */
  name: string;
  /** The Flagwire project of that name in the organisation; null: it is created. */
  projectId: string | null;
  /** The flag file the import applies (Flagwire's format, docs/flags-as-code.md). */
  file: Record<string, unknown>;
  changes: PlannedChange[];
}

export interface RefusedFlag {
  project: string;
  flag: string;
  refusals: Refusal[];
}

/** What is left behind without changing an answer: said, never silently dropped. */
export interface ImportNote {
  project: string;
  flag: string;
  note: string;
}

export interface ImportPlan {
  orgId: string;
  from: string;
  projects: ProjectImport[];
  /** Flags that cannot answer as they did in Unleash: not in the files; apply refuses while there are any, unless told to skip them. */
  refused: RefusedFlag[];
  notes: ImportNote[];
}

/** The import of `source` into organisation `orgId`, planned against the store as it is now. */
export function importPlan(r: StoreReader, source: UnleashSource, orgId: string): ImportPlan {
  const org = getOrg(r, orgId);
  if (org === undefined) throw new FlagwireError('NOT_FOUND', `No organisation "${orgId}" (\`flagwire org list\` shows them).`);
  const segments = new Map(source.segments.map((s) => [s.id, s]));
  const refused: RefusedFlag[] = [];
  const notes: ImportNote[] = [];
  const inOrg = listOrgProjects(r, orgId);
  const projects = source.projects.map((p) => {
    const existing = inOrg.find((q) => sameName(q.name, p.name)) ?? null;
    const features = source.features.filter((f) => f.project === p.id).sort((a, b) => byCodePoint(a.name, b.name));
    const model = projectFile(p, existing === null ? [] : existing.environments, features, segments, refused, notes);
    return planProject(r, p, existing, model);
  });
  return { orgId, from: source.from, projects, refused, notes };
}

/** The desired model of one project: its features that can be carried. */
function projectFile(
  project: SourceProject,
  stored: readonly string[],
  features: readonly SourceFeature[],
  segments: ReadonlyMap<number, SourceSegment>,
  refused: RefusedFlag[],
  notes: ImportNote[],
): ProjectModel {
  // A project's environments are never removed: the stored ones first, then Unleash's it lacks.
  const environments = [...stored, ...project.environments.filter((e) => !stored.includes(e))];
  const names = new Set(features.map((f) => f.name));
  const mapped = new Map<string, { states: Record<string, ModelState>; refusals: Refusal[] }>();
  for (const feature of features) {
    const refusals: Refusal[] = [];
    const states: Record<string, ModelState> = {};
    for (const env of project.environments) {
      const config = feature.environments[env] ?? { enabled: false, strategies: [], variants: [] };
      const state = mapEnvironment(env, feature, config, segments);
      if (state.ok) states[env] = state.state;
      else refusals.push(...state.refusals);
    }
    for (const d of feature.dependencies)
      if (!names.has(d.feature))
        refusals.push({
          where: 'dependencies',
          reason: `its parent "${d.feature}" is not among project "${project.id}"'s features: Unleash answers it as its parent allows, Flagwire without the parent would answer off; export the parent too`,
        });
    mapped.set(feature.name, { states, refusals });
  }
  refuseOrphans(features, mapped);
  const flags: Record<string, ModelGroupFlag> = {};
  for (const feature of features) {
    const { states, refusals } = mapped.get(feature.name)!;
    const tags = feature.tags.filter((t) => t.length <= kLimits.tagLength);
    for (const t of feature.tags)
      if (t.length > kLimits.tagLength)
        notes.push({
          project: project.id,
          flag: feature.name,
          note: `tag "${t}" is longer than ${kLimits.tagLength} characters: not carried`,
        });
    if (feature.stale) notes.push({ project: project.id, flag: feature.name, note: 'marked stale in Unleash: tagged unleash-stale' });
    if (refusals.length > 0) {
      refused.push({ project: project.id, flag: feature.name, refusals });
      continue;
    }
    const type = flagTypeOf(feature.type);
    if (type === null)
      notes.push({
        project: project.id,
        flag: feature.name,
        note: `Unleash type "${feature.type}" is not one Flagwire knows: a release flag`,
      });
    flags[feature.name] = {
      kind: 'groupflag',
      // Unleash's flag types are Flagwire's (docs/unleash-import.md): a release flag is the default, left unsaid.
      ...(type === null || type === 'release' ? {} : { type }),
      description: feature.description,
      tags: [...tags, `unleash-type:${feature.type}`, ...(feature.stale ? ['unleash-stale'] : [])],
      cohorts: null,
      environments: states,
    };
  }
  return { kind: 'multi', environments, audiences: null, flags, fragments: null };
}

/** Unleash's flag type as Flagwire's, or null for a type Flagwire does not know. */
function flagTypeOf(type: string): FlagType | null {
  return (kFlagTypes as readonly string[]).includes(type) ? (type as FlagType) : null;
}

/**
 * Refuses each child whose parent is refused, and so on down: left out, the parent would be absent, and
 * the child, which Unleash answers by its parent, would answer off (--skip-refused never carries it).
 */
function refuseOrphans(features: readonly SourceFeature[], mapped: ReadonlyMap<string, { refusals: Refusal[] }>): void {
  const isRefused = (name: string) => (mapped.get(name)?.refusals.length ?? 0) > 0;
  let more = true;
  while (more) {
    more = false;
    for (const feature of features) {
      const { refusals } = mapped.get(feature.name)!;
      const parent = refusals.length === 0 ? feature.dependencies.find((d) => isRefused(d.feature)) : undefined;
      if (parent === undefined) continue;
      refusals.push({
        where: 'dependencies',
        reason: `its parent "${parent.feature}" is not carried (see its reasons): Unleash answers it as its parent allows, Flagwire without the parent would answer off`,
      });
      more = true;
    }
  }
}

function planProject(r: StoreReader, source: SourceProject, existing: Project | null, desired: ProjectModel): ProjectImport {
  const file = fileDocument(desired);
  // Read back as `flagwire apply` would read it: a file it would refuse is refused here, before anything.
  const parsed = parseFlagFile(file);
  if (!parsed.ok)
    throw new FlagwireError('INVALID_REQUEST', `Unleash's project "${source.id}" cannot be imported: ${listedProblems(parsed.problems)}`);
  if (existing !== null && existing.kind !== 'multi')
    throw new FlagwireError(
      'INVALID_REQUEST',
      `the project "${existing.name}" (${existing.id}) has one environment; Unleash's "${source.id}" has environments: rename one of them`,
    );
  const current: ProjectModel =
    existing === null ? { kind: 'multi', environments: [], audiences: {}, flags: {}, fragments: null } : projectModel(r, existing);
  const planned = planChanges(current, parsed.model, { prune: false });
  if (!planned.ok)
    throw new FlagwireError('INVALID_REQUEST', `Unleash's project "${source.id}" cannot be imported: ${listedProblems(planned.problems)}`);
  return { unleashProject: source.id, name: source.name, projectId: existing?.id ?? null, file, changes: planned.changes };
}
