// The fragments capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action a fragment command writes. */
export const kFragmentAuditActions = ['fragment.create', 'fragment.update', 'fragment.delete'] as const;
export type FragmentAuditAction = (typeof kFragmentAuditActions)[number];
