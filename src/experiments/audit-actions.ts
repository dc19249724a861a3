// The experiments capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action an experiment command writes. */
export const kExperimentAuditActions = [
  'experiment.create',
  'experiment.update',
  'experiment.start',
  'experiment.stop',
  'experiment.delete',
] as const;
export type ExperimentAuditAction = (typeof kExperimentAuditActions)[number];
