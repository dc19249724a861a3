// Creating in the web console: an organisation's project (its Admin or Owner), and an organisation
// (any signed-in user, where the operator allows it with FLAGWIRE_CONSOLE_CREATE_ORGS). Both are the
// CLI's own writer commands, given the signed-in user.
import { kOrgCommands } from '../../orgs/org-commands.js';
import { kProjectCommands } from '../../projects/project-commands.js';
import { FlagwireError } from '../../errors.js';
import { orgAccess } from '../access.js';
import { type ApiRoute, form, text, texts } from './call.js';

export const kOrgRoutes: readonly ApiRoute[] = [
  {
    // {name, kind: "single" | "multi", environments: [names]}; the writer checks the role and every field.
    method: 'POST',
    pattern: 'orgs/:orgId/projects',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = form(call);
      const kind = text(body, 'kind');
      if (kind !== 'single' && kind !== 'multi') throw new FlagwireError('INVALID_REQUEST', 'kind must be single or multi');
      return call.writer.call(kProjectCommands.projectCreate, {
        name: text(body, 'name'),
        orgId: org.id,
        kind,
        environments: body.environments === undefined ? [] : texts(body, 'environments'),
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'orgs',
    run(call) {
      if (!call.config.consoleCreateOrgs) {
        throw new FlagwireError(
          'FORBIDDEN',
          "This server's operator creates organisations (flagwire org create); FLAGWIRE_CONSOLE_CREATE_ORGS is off.",
        );
      }
      return call.writer.call(kOrgCommands.orgCreate, { name: text(form(call), 'name'), asUserId: call.user.id });
    },
  },
];
