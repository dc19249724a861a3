// The tokens capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action the token commands write. */
export const kTokenAuditActions = ['token.create', 'token.rotate', 'token.revoke'] as const;
export type TokenAuditAction = (typeof kTokenAuditActions)[number];
