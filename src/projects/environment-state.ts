// How an audience bears on an environment's state (src/store/interfaces.ts: EnvironmentBearing), for the
// approvals gate: its rules, where a flag on in the environment uses it, or will once a pending release
// plan runs or a pending change request is applied (EnvRead).
import type { EnvironmentBearing } from '../store/interfaces.js';
import type { Audience } from '../model/projects.js';
import { getAudience, kAudienceRecords } from '../model/records/project-records.js';

export const kAudienceEnvironmentState: EnvironmentBearing<Audience> = {
  kind: kAudienceRecords,
  projectOf: (audience) => audience.projectId,
  stored: (r, audience) => getAudience(r, audience.id),
  view(_r, audience, _env, reads) {
    if (audience === undefined) return null;
    const used = reads().some(({ state }) => state.enabled && state.audienceId === audience.id);
    return used ? { name: audience.name, rules: audience.rules } : null;
  },
};
