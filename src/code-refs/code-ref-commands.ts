// Code references as a writer command: a scan of one branch pushed by a write token (CI), replacing the
// branch's last one. Not audited: a pipeline pushes on every commit, and a scan changes no rule
// (docs/decisions.md: Code references).
import { actorInProject, type Principal } from '../actor/audit-actor.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import { keysNamed, putBranchScan } from './records.js';
import { CodeRefsPush, type CodeRefsPushed } from './schemas.js';

const kPushValidator = compileValidator(CodeRefsPush, { quoteKeys: false });

export interface CodeRefsPushInput {
  principal: Principal;
  /** The project, for a person or the operator (a token pushes to its own project). */
  projectId: string;
  received: ReceivedBody;
}

export function codeRefsPush(w: StoreWriter, input: CodeRefsPushInput, now: number): CodeRefsPushed {
  const { project, actor } = actorInProject(w, input.principal, () => input.projectId, 'editFlags', now);
  const body = checkedBody(input.received, kPushValidator);
  const scan = {
    projectId: project.id,
    repository: body.repository,
    branch: body.branch,
    commit: body.commit,
    pushedAt: now,
    pushedBy: actor.id,
    references: body.references,
  };
  putBranchScan(w, scan);
  return {
    repository: scan.repository,
    branch: scan.branch,
    commit: scan.commit,
    pushedAt: now,
    references: scan.references.length,
    flags: keysNamed(scan).size,
  };
}
