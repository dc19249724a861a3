// `flagwire export` and GET /api/v1/export: a project's flags as a file, its shared fragments as
// `$evaluators`. Flagwire's own format carries everything and applies back to the same state
// (flag-file.ts); flagd's says each flag as the flag sets of the sync service say it
// (src/flags/flagd-flag.ts, docs/design.md §2c), so that flagd given the file answers as OFREP does, and
// leaves out, naming them and why in `x-flagwire-omitted`, the flags flagd's language cannot say exactly.
// Both are deterministic: the same project state gives the same bytes.
import { FlagwireError } from '../errors.js';
import { resolveEnvParam } from '../model/environments.js';
import type { Project } from '../model/projects.js';
import { hasAudiences } from '../model/plans.js';
import type { StoreReader } from '../store/interfaces.js';
import type { Flag } from '../model/flags.js';
import { flagInFlagd, type FlagdFlagContext } from '../flags/flagd-flag.js';
import { fragmentRule, fragmentRules, projectFragments } from '../flags/records/fragment-records.js';
import { ResolvedFragments } from '../flags/records/fragment-resolve.js';
import { listFragments } from '../flags/records/fragment-records.js';
import { fileDocument } from './flag-file.js';
import { apiView, type ModelView, projectModel, sortedByName } from './project-model.js';
import { kBucketingKey } from '../flags/bucketing.js';
import { listFlags } from '../flags/records/flag-store.js';
import { getOrg } from '../model/records/org-records.js';
import { listAudiences } from '../model/records/project-records.js';

export type ExportFormat = 'flagwire' | 'flagd';
export const kExportFormats: readonly ExportFormat[] = ['flagwire', 'flagd'];

export interface ExportOptions {
  format: ExportFormat;
  /** flagd's format of a multi-environment project: the environment it describes (flagd has none). */
  env: string | null;
}

const kFlagdSchema = 'https://flagd.dev/schema/v0/flags.json';
/** The key of flagd's format that names each flag left out and why (flagd ignores a document's unknown keys). */
const kOmittedKey = 'x-flagwire-omitted';

/** The export as a JSON value (fileText gives its bytes); `now` decides whether the plan allows audiences. */
export function exportProject(
  r: StoreReader,
  project: Project,
  options: ExportOptions,
  view: ModelView,
  now: number,
): Record<string, unknown> {
  if (options.format === 'flagwire') {
    if (options.env !== null)
      throw new FlagwireError('INVALID_REQUEST', "env selects flagd's environment; Flagwire's format holds every environment: drop it");
    const model = projectModel(r, project);
    if (view === 'api') apiView(model);
    return fileDocument(model);
  }
  return flagdDocument(r, project, resolveEnvParam(project, options.env, true, 'export'), now);
}

/**
 * flagd's format of one environment: the flags as the flag sets say them, but that the rules keep their
 * `$ref`s (the project's fragments are the file's `$evaluators`, which `flags import` reads back as
 * fragments; a project without any exports as it did before fragments), and the flags left out named,
 * with why, in `x-flagwire-omitted` (a key flagd ignores; absent when none is).
 */
function flagdDocument(r: StoreReader, project: Project, environment: string | null, now: number): Record<string, unknown> {
  const org = project.orgId === null ? null : getOrg(r, project.orgId);
  const ctx: FlagdFlagContext = {
    environment,
    audiences: listAudiences(r, project.id),
    audiencesAllowed: hasAudiences(org, now),
    fragments: new ResolvedFragments(fragmentRules(projectFragments(r, project.id))),
    refs: 'kept',
  };
  // Entries, then fromEntries, not assignment: a flag named "__proto__" is a key like any other.
  const flags: [string, Record<string, unknown>][] = [];
  const omitted: [string, string][] = [];
  for (const flag of sortedByName(listFlags(r, project.id))) {
    const said = flagInFlagd(flag, ctx);
    if (said.flag === null) omitted.push([flag.name, said.omitted]);
    else flags.push([flag.name, { ...said.flag, ...flagdBucketing(flag) }]);
  }
  const fragments = listFragments(r, project.id);
  const evaluators = fragments.length > 0 ? { $evaluators: Object.fromEntries(fragments.map((f) => [f.name, fragmentRule(f)])) } : {};
  return {
    $schema: kFlagdSchema,
    ...evaluators,
    flags: Object.fromEntries(flags),
    ...(omitted.length > 0 ? { [kOmittedKey]: Object.fromEntries(omitted) } : {}),
  };
}

/**
 * A fractional flag's bucketing, as `flags import` reads it back (flagd ignores a flag's unknown keys); a
 * modulo flag has none, so its export is as it was.
 */
function flagdBucketing(flag: Flag): Record<string, unknown> {
  return flag.bucketing === 'fractional' ? { [kBucketingKey]: flag.bucketing } : {};
}
