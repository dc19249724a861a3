// The importer's reader (issue 60, item 4): an Unleash instance read into one shape (import-source.ts),
// from its admin API (a URL and an admin token) or from its export files. Both read Unleash's feature
// export, one per project and environment from the API (POST /api/admin/features-batch/export), one per
// environment from files; the API adds what an export leaves out: the projects' names and environments
// (GET /api/admin/projects, /api/admin/environments/project/{id}) and the segments' constraints
// (GET /api/admin/segments). Whatever cannot be read is a clear refusal, naming the file or the call.
import { FlagwireError } from '../errors.js';
import { compileValidator } from '../model/validation.js';
import type { Static, TSchema } from '../typebox.js';
import type { Validator } from '../model/validation.js';
import {
  AdminProjectEnvironments,
  AdminProjects,
  AdminSegments,
  type SourceFeature,
  type SourceProject,
  type SourceSegment,
  UnleashExport,
  type UnleashSource,
} from './import-source.js';

const kExport = compileValidator(UnleashExport, { quoteKeys: false });
const kProjects = compileValidator(AdminProjects, { quoteKeys: false });
const kProjectEnvironments = compileValidator(AdminProjectEnvironments, { quoteKeys: false });
const kSegments = compileValidator(AdminSegments, { quoteKeys: false });

/** An export file as read: its name (for messages) and its text. */
export interface ExportFile {
  name: string;
  text: string;
}

/** One environment's export, its environment known; `name` says where it was read, for messages. */
interface EnvironmentExport {
  name: string;
  environment: string;
  data: UnleashExport;
}

function refused(detail: string): FlagwireError {
  return new FlagwireError('INVALID_REQUEST', detail);
}

/** An export file's content, or a refusal naming the file and every problem. */
export function parseExportFile(file: ExportFile): EnvironmentExport {
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch (err) {
    throw refused(`${file.name} is not JSON (${(err as Error).message}): give the file Unleash's export writes`);
  }
  if (!kExport.check(value)) {
    const looksLikeState =
      value !== null && typeof value === 'object' && 'version' in value && 'features' in value && !('featureStrategies' in value);
    const hint = looksLikeState
      ? "it looks like Unleash's older state export (/api/admin/state) or a client API answer: export with Unleash 5.3 or later (Export in the flag list, or POST /api/admin/features-batch/export)"
      : "it is not Unleash's feature export (POST /api/admin/features-batch/export)";
    throw refused(`${file.name}: ${hint}: ${kExport.problems(value).slice(0, 5).join('; ')}`);
  }
  const environments = [...new Set((value.featureEnvironments ?? []).map((e) => e.environment))];
  if (environments.length !== 1)
    throw refused(
      `${file.name}: an export is of one environment, and this one names ${environments.length === 0 ? 'none (it has no featureEnvironments)' : environments.join(', ')}`,
    );
  const parsed = { name: file.name, environment: environments[0]!, data: value };
  requireWhole(parsed);
  return parsed;
}

/**
 * Refuses an export whose parts do not fit together: a feature listed twice, or a strategy, an environment
 * entry, a tag or a dependency list naming a feature the export does not list. Each would otherwise be
 * dropped or picked from without a word (docs/unleash-migration.md: nothing is dropped silently).
 */
function requireWhole({ name, environment, data }: EnvironmentExport): void {
  const problems: string[] = [];
  const twice = (part: string, names: readonly string[]) => {
    const seen = new Set<string>();
    for (const feature of names) {
      if (seen.has(feature)) problems.push(`feature "${feature}" is listed twice in ${part}`);
      seen.add(feature);
    }
  };
  const listed = new Set(data.features.map((f) => f.name));
  const unlisted = (part: string, names: readonly (string | undefined)[]) =>
    names.forEach((feature, i) => {
      if (feature === undefined) problems.push(`${part}[${i}] names no feature`);
      else if (!listed.has(feature)) problems.push(`${part}[${i}] names feature "${feature}", which features does not list`);
    });
  const environments = (data.featureEnvironments ?? []).map((e) => e.featureName);
  twice(
    'features',
    data.features.map((f) => f.name),
  );
  twice('featureEnvironments', environments);
  twice(
    'dependencies',
    (data.dependencies ?? []).map((d) => d.feature),
  );
  unlisted(
    'featureStrategies',
    data.featureStrategies.map((s) => s.featureName),
  );
  unlisted('featureEnvironments', environments);
  unlisted(
    'featureTags',
    (data.featureTags ?? []).map((t) => t.featureName),
  );
  unlisted(
    'dependencies',
    (data.dependencies ?? []).map((d) => d.feature),
  );
  if (problems.length > 0)
    throw refused(
      `${name} (environment "${environment}") does not fit together, so nothing is imported: ${problems.join('; ')}. Export it again from Unleash, or mend the file.`,
    );
}

/** Export files, one per environment, read into the import's shape; the projects are those their features name. */
export function readExportFiles(files: readonly ExportFile[]): UnleashSource {
  const exports = files.map(parseExportFile);
  const seen = new Map<string, string>();
  exports.forEach((e, i) => {
    const other = seen.get(e.environment);
    if (other !== undefined) throw refused(`${files[i]!.name} and ${other} are both exports of environment "${e.environment}"`);
    seen.set(e.environment, files[i]!.name);
  });
  const environments = exports.map((e) => e.environment);
  const projectIds = [...new Set(exports.flatMap((e) => e.data.features.map((f) => f.project)))];
  const projects = projectIds.map((id) => ({ id, name: id, description: '', environments }));
  // An export names its segments without their constraints: null, which the plan reports per flag.
  const segments = new Map<number, SourceSegment>();
  for (const e of exports) for (const s of e.data.segments ?? []) segments.set(s.id, { id: s.id, name: s.name, constraints: null });
  return { from: files.map((f) => f.name).join(', '), projects, features: features(exports), segments: [...segments.values()] };
}

/** The features of every export, each with its configuration per environment. */
function features(exports: readonly EnvironmentExport[]): SourceFeature[] {
  const byName = new Map<string, SourceFeature>();
  const readIn = new Map<string, string>();
  for (const { name, environment, data } of exports) {
    for (const f of data.features) {
      if (f.archived === true) continue;
      let feature = byName.get(f.name);
      if (feature !== undefined && feature.project !== f.project)
        throw refused(
          `feature "${f.name}" is of project "${feature.project}" in ${readIn.get(f.name)} and of project "${f.project}" in ${name}, so nothing is imported: an Unleash feature is of one project; give exports of the same Unleash`,
        );
      if (feature === undefined) {
        readIn.set(f.name, name);
        const tags = (data.featureTags ?? [])
          .filter((t) => t.featureName === f.name)
          .map((t) => `${t.tagType ?? 'simple'}:${t.tagValue ?? ''}`);
        feature = {
          name: f.name,
          project: f.project,
          description: f.description ?? '',
          tags: [...new Set(tags)],
          type: f.type ?? 'release',
          stale: f.stale ?? false,
          impressionData: f.impressionData ?? false,
          dependencies: (data.dependencies ?? []).find((d) => d.feature === f.name)?.dependencies ?? [],
          environments: {},
        };
        byName.set(f.name, feature);
      }
      const state = (data.featureEnvironments ?? []).find((e) => e.featureName === f.name);
      const strategies = data.featureStrategies
        .filter((s) => s.featureName === f.name && s.disabled !== true)
        .sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0));
      feature.environments[environment] = { enabled: state?.enabled ?? false, strategies, variants: state?.variants ?? [] };
    }
  }
  return [...byName.values()];
}

/** How the API reader calls Unleash: fetch, or a test's own. */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<Response>;

/** A running Unleash read through its admin API: every project, every environment it has enabled. */
export async function readUnleashApi(baseUrl: string, token: string, fetchFn: Fetch = fetch): Promise<UnleashSource> {
  const root = baseUrl.replace(/\/+$/, '');
  const call = async <T extends TSchema>(method: string, path: string, validator: Validator<T>, body?: unknown): Promise<Static<T>> => {
    let res: Response;
    try {
      res = await fetchFn(`${root}${path}`, {
        method,
        headers: { authorization: token, accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw refused(`cannot reach Unleash at ${root} (${(err as Error).cause ?? (err as Error).message})`);
    }
    const text = await res.text();
    if (res.status === 401 || res.status === 403)
      throw refused(`Unleash at ${root} refused the token (${res.status} on ${method} ${path}): give an admin API token`);
    if (!res.ok) throw refused(`Unleash at ${root} answered ${res.status} to ${method} ${path}: ${text.slice(0, 300)}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw refused(`Unleash at ${root} answered ${method} ${path} with something not JSON: is ${root} Unleash's URL (without /api)?`);
    }
    if (!validator.check(value))
      throw refused(
        `Unleash at ${root} answered ${method} ${path} in a shape this importer does not read: ${validator.problems(value).slice(0, 3).join('; ')}`,
      );
    return value;
  };
  const { projects: listed } = await call('GET', '/api/admin/projects', kProjects);
  const projects: SourceProject[] = [];
  const exports: EnvironmentExport[] = [];
  for (const p of listed) {
    const { environments } = await call('GET', `/api/admin/environments/project/${encodeURIComponent(p.id)}`, kProjectEnvironments);
    const enabled = environments.filter((e) => e.enabled !== false).sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0));
    projects.push({ id: p.id, name: p.name, description: p.description ?? '', environments: enabled.map((e) => e.name) });
    for (const e of enabled) {
      const data = await call('POST', '/api/admin/features-batch/export', kExport, { environment: e.name, project: p.id });
      const parsed = { name: `Unleash's export of project "${p.id}"`, environment: e.name, data };
      requireWhole(parsed);
      exports.push(parsed);
    }
  }
  const { segments } = await call('GET', '/api/admin/segments', kSegments);
  return {
    from: root,
    projects,
    features: features(exports),
    segments: segments.map((s) => ({ id: s.id, name: s.name, constraints: s.constraints })),
  };
}
