// What several capabilities' Management API routes share: the token as who asks, and the write that
// hands a body to a command of the token's project.
import type { Principal } from '../actor/audit-actor.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { AuthContext } from '../model/records/token-access.js';
import type { WriterCommand } from '../writer/command.js';
import type { WriteHandler } from './handler.js';

/** The request's token as who asks: the writer authorises it again as it applies the change. */
export function tokenPrincipal(auth: AuthContext): Principal {
  return { kind: 'token', tokenId: auth.token.id };
}

/** What a command of the token's project is given: who asks, the project, and the body as received. */
export interface ProjectBodyInput {
  principal: Principal;
  projectId: string;
  received: ReceivedBody;
}

/** A write that hands the body to `command` in the token's project and answers `status` with what it returns. */
export function projectBodyWrite<O>(command: WriterCommand<ProjectBodyInput, O>, status: number): WriteHandler {
  return {
    kind: 'write',
    async run(_request, auth, received, release, deps) {
      const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, received };
      return { status, value: await deps.writer.call(command, input, release) };
    },
  };
}
