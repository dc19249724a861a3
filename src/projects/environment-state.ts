// How an audience bears on an environment's state (src/store/interfaces.ts: EnvironmentBearing), for the
// approvals gate: its rules, where a flag that evaluation reads in the environment uses it.
import type { EnvironmentBearing } from '../store/interfaces.js';
import { effectiveState } from '../flags/flag-state.js';
import type { Audience } from '../model/projects.js';
import { kAudienceRecords } from '../store/record-kinds.js';

export const kAudienceEnvironmentState: EnvironmentBearing<Audience> = {
  kind: kAudienceRecords,
  projectOf: (audience) => audience.projectId,
  stored: (r, audience) => r.getAudience(audience.id),
  view(r, audience, env) {
    if (audience === undefined) return null;
    const used = r.listFlags(audience.projectId).some((flag) => {
      const state = effectiveState(flag, env);
      return state.enabled && state.audienceId === audience.id;
    });
    return used ? { name: audience.name, rules: audience.rules } : null;
  },
};
