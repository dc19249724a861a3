// The events capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action the events commands write. */
export const kEventAuditActions = ['events.settings'] as const;
