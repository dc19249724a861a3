// The orgs capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/**
 * What a membership's audit entry says happened: a role given here, or an invitation made, accepted or
 * declined (src/invitations). The orgs and invitations capabilities each declare their part.
 */
export const kMemberAuditActions = ['member.role', 'member.invite', 'member.accept', 'member.decline'] as const;
export type MemberAuditAction = (typeof kMemberAuditActions)[number];
