// A single flag's record as the store keeps it, for in-process tests of what reads flags (the flagd flag
// sets, Unleash's client API): every field at its plain default unless given.
import type { FlagState, SingleFlag } from '../../src/model/flags.js';

export function singleFlagRecord(
  id: string,
  projectId: string,
  name: string,
  state: Partial<FlagState>,
  extra: Partial<SingleFlag> = {},
): SingleFlag {
  return {
    id,
    projectId,
    name,
    description: '',
    tags: [],
    cohorts: [],
    createdAt: 0,
    updatedAt: 0,
    kind: 'flag',
    state: { enabled: true, trafficPercentage: 100, audienceId: null, ...state },
    ...extra,
  };
}
