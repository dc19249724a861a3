// The web console's organisation routes: creating an organisation (any signed-in user, where the
// operator allows it with FLAGWIRE_CONSOLE_CREATE_ORGS), with the CLI's own writer command, given the
// signed-in user.
import { FlagwireError } from '../errors.js';
import { Type } from '../typebox.js';
import type { ApiRoute } from '../web-console/api/call.js';
import { compileForm, FormText } from '../web-console/forms.js';
import { kOrgCommands } from './org-commands.js';

const kOrgForm = compileForm(Type.Object({ name: FormText }));

export const kOrgConsoleRoutes: readonly ApiRoute[] = [
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
      return call.writer.call(kOrgCommands.orgCreate, { name: kOrgForm.read(call.received).name, asUserId: call.user.id });
    },
  },
];
