// Approvals as a capability (issue 46; docs/approvals.md): a project's approval policy per environment,
// the change requests that changes to a guarded environment become (the gate: gate.ts, which every
// writer command runs through), and the commands, routes and command-line commands that decide them.
import { defineCapability } from '../capability/capability.js';
import { kApprovalAuditActions } from './audit-actions.js';
import { kApprovalCommands } from './command-table.js';
import { kApprovedPlanRecords, kChangeRequestRecords } from './records.js';
import { ChangeRequestedBody } from './change-requested.js';
import { ChangeRequestList, ChangeRequestView, CommentBody } from './request-view.js';

export const kApprovals = defineCapability({
  name: 'approvals',
  databases: ['changeRequests', 'approvedPlans'],
  records: [kChangeRequestRecords, kApprovedPlanRecords],
  commands: kApprovalCommands,
  routes: async () => (await import('./routes.js')).kApprovalApiRoutes,
  schemas: {
    ChangeRequest: ChangeRequestView,
    ChangeRequestList,
    ChangeRequested: ChangeRequestedBody,
    ChangeRequestComment: CommentBody,
  },
  consoleRoutes: async () => (await import('./console-routes.js')).kApprovalConsoleRoutes,
  cli: async () => (await import('./cli.js')).kApprovalCli,
  auditActions: kApprovalAuditActions,
  webhookEvent: 'request',
});
