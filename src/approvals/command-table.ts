// The approvals capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { approvalsClear, approvalsSet } from './policy-commands.js';
import { requestApprove, requestComment, requestReject, requestWithdraw } from './request-commands.js';

export const kApprovalCommands = commandTable({
  approvalsSet,
  approvalsClear,
  requestApprove,
  requestReject,
  requestWithdraw,
  requestComment,
});
