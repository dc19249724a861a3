// How a project's shared fragments bear on an environment's state (src/store/interfaces.ts:
// EnvironmentBearing), for the approvals gate: the rules of those that a flag on in the environment
// names with `$ref`, or will once a pending release plan runs or a pending change request is applied
// (EnvRead). Changing or deleting one such fragment changes evaluation there, as an audience does.
import type { EnvironmentBearing } from '../store/interfaces.js';
import { ruleRefs } from '../targeting/refs.js';
import { fragmentRule, kFragmentRecords, type ProjectFragments } from './records/fragment-records.js';

export const kFragmentEnvironmentState: EnvironmentBearing<ProjectFragments> = {
  kind: kFragmentRecords,
  projectOf: (record) => record.projectId,
  stored: (r, record) => r.getKeyed(kFragmentRecords, record.projectId),
  view(_r, record, _env, reads) {
    if (record === undefined) return null;
    const used = new Set<string>();
    for (const { state } of reads()) {
      if (state.enabled && state.typed !== undefined) for (const name of ruleRefs(state.typed.targeting)) used.add(name);
    }
    const rules = record.fragments.filter((f) => used.has(f.name)).map((f) => [f.name, fragmentRule(f)]);
    return rules.length === 0 ? null : Object.fromEntries(rules);
  },
};
