// Creating in the web console: an organisation's project (its Admin or Owner), and an organisation
// (any signed-in user, where the operator allows it with FLAGWIRE_CONSOLE_CREATE_ORGS). Both are the
// CLI's own writer commands, given the signed-in user.
import { FlagwireError } from '../../errors.js';
import { orgAccess } from '../access.js';
import { Type } from '../../typebox.js';
import type { ApiRoute } from './call.js';
import { compileForm, FormText, FormTexts } from '../forms.js';

/** The kind is checked first, then the rest: a wrong kind is named before a wrong name. */
const kProjectForm = compileForm(
  Type.Object({
    kind: Type.String({ pattern: '^(single|multi)$', 'x-error': 'must be a string', 'x-pattern-error': 'kind must be single or multi' }),
    name: FormText,
    environments: Type.Optional(FormTexts),
  }),
);
const kOrgForm = compileForm(Type.Object({ name: FormText }));

export const kOrgRoutes: readonly ApiRoute[] = [
  {
    // {name, kind: "single" | "multi", environments: [names]}; the writer checks the role and every field.
    method: 'POST',
    pattern: 'orgs/:orgId/projects',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = kProjectForm.read(call.received);
      return call.writer.call('projectCreate', {
        name: body.name,
        orgId: org.id,
        // The pattern admits these two only.
        kind: body.kind as 'single' | 'multi',
        environments: body.environments ?? [],
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
      return call.writer.call('orgCreate', { name: kOrgForm.read(call.received).name, asUserId: call.user.id });
    },
  },
];
