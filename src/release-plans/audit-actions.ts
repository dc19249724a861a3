// The release plans capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action a release plan writes (its own flag changes are the flag's `flag.patch`). */
export const kReleasePlanAuditActions = [
  'schedule.create',
  'schedule.cancel',
  'schedule.fail',
  'rollout.start',
  'rollout.pause',
  'rollout.resume',
  'rollout.skip',
  'rollout.rollback',
  'rollout.guard-breach',
] as const;
export type ReleasePlanAuditAction = (typeof kReleasePlanAuditActions)[number];
