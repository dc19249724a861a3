// The approvals capability's audit actions: a closed list, declared once (src/capability/capability.ts).
export const kApprovalAuditActions = [
  'approvals.set',
  'approvals.clear',
  'request.open',
  'request.edit',
  'request.stale',
  'request.approve',
  'request.apply',
  'request.reject',
  'request.withdraw',
  'request.comment',
] as const;
export type ApprovalAuditAction = (typeof kApprovalAuditActions)[number];
