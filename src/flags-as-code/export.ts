// `flagwire export` and GET /api/v1/export: a project's flags as a file, its shared fragments as
// `$evaluators`. Flagwire's own format carries everything and applies back to the same state
// (flag-file.ts); flagd's carries what flagd can express,
// and each flag says in `x-flagwire-omitted` what it could not (flagd ignores a flag's unknown keys).
// Both are deterministic: the same project state gives the same bytes.
import { FlagwireError } from '../errors.js';
import { resolveEnvParam } from '../model/environments.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import { fileDocument } from './flag-file.js';
import { apiView, type ModelFlag, type ModelState, type ModelView, projectModel } from './project-model.js';
import { kBucketingKey } from '../flags/import-commands.js';

export type ExportFormat = 'flagwire' | 'flagd';
export const kExportFormats: readonly ExportFormat[] = ['flagwire', 'flagd'];

export interface ExportOptions {
  format: ExportFormat;
  /** flagd's format of a multi-environment project: the environment it describes (flagd has none). */
  env: string | null;
}

const kFlagdSchema = 'https://flagd.dev/schema/v0/flags.json';

/** The export as a JSON value (fileText gives its bytes). */
export function exportProject(r: StoreReader, project: Project, options: ExportOptions, view: ModelView): Record<string, unknown> {
  const model = projectModel(r, project);
  if (options.format === 'flagwire') {
    if (options.env !== null)
      throw new FlagwireError('INVALID_REQUEST', "env selects flagd's environment; Flagwire's format holds every environment: drop it");
    if (view === 'api') apiView(model);
    return fileDocument(model);
  }
  const env = resolveEnvParam(project, options.env, true, 'export');
  // fromEntries, not assignment: a flag named "__proto__" is a key like any other.
  const flags = Object.fromEntries(
    Object.entries(model.flags).map(([name, flag]) => [
      name,
      { ...flagdFlag(flag.kind === 'flag' ? flag.state : flag.environments[env!]!), ...flagdBucketing(flag) },
    ]),
  );
  // The project's fragments as flagd's `$evaluators`, which its rules' `$ref`s name (`flags import` reads
  // them back as fragments); a project without any exports as it did before fragments.
  const evaluators = model.fragments !== null && Object.keys(model.fragments).length > 0 ? { $evaluators: model.fragments } : {};
  return { $schema: kFlagdSchema, ...evaluators, flags };
}

/**
 * A fractional flag's bucketing, as `flags import` reads it back (flagd ignores a flag's unknown keys); a
 * modulo flag has none, so its export is as it was.
 */
function flagdBucketing(flag: ModelFlag): Record<string, unknown> {
  return flag.bucketing === undefined ? {} : { [kBucketingKey]: flag.bucketing };
}

/**
 * One state in flagd's terms. flagd has no gate before its rule, so Flagwire's percentage, cohorts and
 * audience cannot be said there: a state whose gate lets everyone in exports exactly; any other names
 * what it leaves out. A boolean flag becomes variants on/off, "on" by default when everyone is in.
 */
function flagdFlag(state: ModelState): Record<string, unknown> {
  const everyone = state.trafficPercentage === 100 && state.audience === null;
  const gate = [
    ...(state.trafficPercentage < 100 ? [`trafficPercentage ${state.trafficPercentage}`] : []),
    ...(state.trafficPercentage < 100 && state.cohorts.length > 0 ? [`cohorts (${state.cohorts.length})`] : []),
    ...(state.audience === null ? [] : [`audience "${state.audience}"`]),
  ];
  const out: Record<string, unknown> = {};
  const { typed } = state;
  if (typed === undefined) {
    out.state = 'ENABLED';
    out.variants = { on: true, off: false };
    out.defaultVariant = state.enabled && everyone ? 'on' : 'off';
    if (state.enabled && !everyone) out['x-flagwire-omitted'] = [`who is on: ${gate.join(', ')}; flagd serves "off" to every caller`];
    return out;
  }
  out.state = state.enabled ? 'ENABLED' : 'DISABLED';
  out.variants = typed.variants;
  out.defaultVariant = typed.defaultVariant;
  if (Object.keys(typed.targeting).length > 0) out.targeting = typed.targeting;
  if (typed.metadata !== undefined && Object.keys(typed.metadata).length > 0) out.metadata = typed.metadata;
  if (state.enabled && !everyone)
    out['x-flagwire-omitted'] = [`who the rule applies to: ${gate.join(', ')}; flagd applies it to every caller`];
  return out;
}
