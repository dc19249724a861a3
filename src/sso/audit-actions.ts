// The sso capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action single sign-on writes (besides member.role for the roles its groups give). */
export const kSsoAuditActions = ['sso.configure', 'sso.remove', 'sso.member.create'] as const;
