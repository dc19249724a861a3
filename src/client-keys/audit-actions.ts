// The client keys capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action the client key commands write. */
export const kClientKeyAuditActions = ['client-key.create', 'client-key.revoke'] as const;
export type ClientKeyAuditAction = (typeof kClientKeyAuditActions)[number];
