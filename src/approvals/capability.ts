// Approvals as a capability (issue 46; docs/approvals.md): a project's approval policy per environment,
// the change requests that changes to a guarded environment become (the gate: gate.ts, which every
// writer command runs through), and the commands, routes and command-line commands that decide them.
import { defineCapability } from '../capability/capability.js';
import { kApprovalAuditActions } from './audit-actions.js';
import { kApprovalCli } from './cli.js';
import { kApprovalCommands } from './command-table.js';
import { kApprovalConsoleRoutes } from './console-routes.js';
import { kApprovedPlanRecords, kChangeRequestRecords } from './records.js';
import { kApprovalApiRoutes } from './routes.js';
import { ChangeRequestedBody } from './change-requested.js';
import { ChangeRequestList, ChangeRequestView, CommentBody } from './request-view.js';

export const kApprovals = defineCapability({
  name: 'approvals',
  databases: ['changeRequests', 'approvedPlans'],
  records: [kChangeRequestRecords, kApprovedPlanRecords],
  commands: kApprovalCommands,
  routes: kApprovalApiRoutes,
  schemas: {
    ChangeRequest: ChangeRequestView,
    ChangeRequestList,
    ChangeRequested: ChangeRequestedBody,
    ChangeRequestComment: CommentBody,
  },
  consoleRoutes: kApprovalConsoleRoutes,
  cli: kApprovalCli,
  auditActions: kApprovalAuditActions,
  webhookEvent: 'request',
});
