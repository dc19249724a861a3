// The flags capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action a flag command writes. */
export const kFlagAuditActions = [
  'flag.create',
  'flag.patch',
  'flag.rename',
  'flag.describe',
  'flag.tags',
  'flag.cohorts',
  'flag.delete',
  'flag.lifecycle',
  'flag.archive',
  'flag.restore',
] as const;
export type FlagAuditAction = (typeof kFlagAuditActions)[number];
