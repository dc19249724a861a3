// The scim capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action SCIM writes (besides member.role for the roles its groups give). */
export const kScimAuditActions = [
  'scim.enable',
  'scim.rotate',
  'scim.disable',
  'scim.groupRole',
  'scim.user.create',
  'scim.user.update',
  'scim.user.deactivate',
  'scim.user.reactivate',
  'scim.user.delete',
  'scim.group.create',
  'scim.group.update',
  'scim.group.delete',
] as const;
export type ScimAuditAction = (typeof kScimAuditActions)[number];
