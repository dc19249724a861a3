// The projects capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action the project commands write. */
export const kProjectAuditActions = ['env.add', 'env.rename', 'env.protect', 'audience.create', 'audience.update'] as const;
export type ProjectAuditAction = (typeof kProjectAuditActions)[number];
