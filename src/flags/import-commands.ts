// `flagwire flags import`: a flagd flag-definition document into a project, in one writer command, so
// in one transaction: every flag of the file is created or updated by key (the flag's name), or, when
// anything in the file is refused, nothing is written. docs/decisions.md (Typed variants: import).
//
// What the file sets is what flagd expresses: the state (ENABLED is `enabled: true`), the variants, the
// default variant, the rule, with its `$ref`s resolved (a stored flag holds its own rule), and the
// metadata, the flag-set's overlaid with the flag's own (a stored flag holds its own). A new flag
// is on for everyone its rule reaches (trafficPercentage 100, no cohorts, no audience), so it answers as
// flagd answers; an existing one keeps Flagwire's own gate (percentage, cohorts, audience), which the
// file cannot express. Each create and update goes through the Management API's own create and patch
// (flag-commands.ts): the same checks and the same audit entries, one per flag changed; an update that
// changes nothing writes nothing. Flags of the project that the file does not name are left alone.
import { FlagwireError } from '../errors.js';
import type { Flag } from './records.js';
import { resolveEnvParam } from '../model/environments.js';
import { requireProject } from '../model/lookups.js';
import type { StoreWriter } from '../store/interfaces.js';
import { parseFlagDefinition } from '../targeting/parse.js';
import { formatPath, listedProblems, problemText } from '../targeting/problems.js';
import { actorFor, type Principal } from '../audit/audit-actor.js';
import { createFlagAs, patchFlagAs } from './flag-commands.js';

export interface FlagsImportInput {
  projectId: string;
  /** The file's content: JSON text, or the value JSON.parse gave (not yet checked). */
  document: unknown;
  /** A multi-environment project: the environment whose state the file sets. */
  env: string | null;
  /** Who asks: the command line's --as user or the operator (principalOf). */
  principal: Principal;
}

export interface ImportedFlag {
  key: string;
  id: string;
  outcome: 'created' | 'updated' | 'unchanged';
}

export interface FlagsImportResult {
  projectId: string;
  env: string | null;
  flags: ImportedFlag[];
}

export function flagsImport(w: StoreWriter, input: FlagsImportInput, now: number): FlagsImportResult {
  const project = requireProject(w, input.projectId);
  const env = resolveEnvParam(project, input.env, true, 'import');
  const parsed = parseFlagDefinition(input.document);
  if (!parsed.ok) throw refusal(parsed.problems.map(problemText));

  const actor = actorFor(w, input.principal, project, 'editFlags', now);
  const byName = new Map<string, Flag>(w.listFlags(project.id).map((f) => [f.name, f]));
  const flags: ImportedFlag[] = [];
  for (const [key, flag] of Object.entries(parsed.definition.flags)) {
    const state = {
      enabled: flag.state === 'ENABLED',
      variants: flag.variants,
      defaultVariant: flag.defaultVariant,
      targeting: flag.targeting ?? {},
      // The flag-set's metadata overlaid with the flag's own, as flagd serves it ({} is none).
      metadata: { ...parsed.definition.metadata, ...flag.metadata },
    };
    try {
      const existing = byName.get(key);
      if (existing === undefined) {
        const created = { name: key, ...state, trafficPercentage: 100 };
        const body = env === null ? created : { name: key, environments: { [env]: { ...state, trafficPercentage: 100 } } };
        const made = createFlagAs(w, { projectId: project.id, actor, body }, now);
        flags.push({ key, id: made.id, outcome: 'created' });
      } else {
        const result = patchFlagAs(w, { projectId: project.id, flagId: existing.id, env, actor, patch: state }, now);
        flags.push({ key, id: existing.id, outcome: result.changed ? 'updated' : 'unchanged' });
      }
    } catch (err) {
      // The transaction is abandoned whole: a flag written before this one is not kept either.
      if (err instanceof FlagwireError && err.code === 'INVALID_REQUEST') throw refusal([`${formatPath(['flags', key])}: ${err.detail}`]);
      throw err;
    }
  }
  return { projectId: project.id, env, flags };
}

function refusal(problems: readonly string[]): FlagwireError {
  return new FlagwireError('INVALID_REQUEST', `The file was not imported, nothing changed: ${listedProblems(problems)}`);
}
