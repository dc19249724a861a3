// The web console's project routes: creating an organisation's project (its Admin or Owner), and the
// project settings page's environments and audiences.
import { requireAudience } from '../model/records/lookups.js';
import { type Static, Type } from '../typebox.js';
import { orgAccess, projectAccess } from '../console-route/access.js';
import type { ApiRoute } from '../console-route/call.js';
import { compileForm, FormText, FormTexts } from '../console-route/forms.js';
import { kProjectCommands } from './command-table.js';

/** The kind is checked first, then the rest: a wrong kind is named before a wrong name. */
const kProjectForm = compileForm(
  Type.Object({
    kind: Type.String({ pattern: '^(single|multi)$', 'x-error': 'must be a string', 'x-pattern-error': 'kind must be single or multi' }),
    name: FormText,
    environments: Type.Optional(FormTexts),
  }),
);

const kEnvironmentForm = compileForm(Type.Object({ name: FormText }));
const kEnvironmentRenameForm = compileForm(Type.Object({ from: FormText, to: FormText }));
const kProtectForm = compileForm(Type.Object({ protected: Type.Boolean({ 'x-error': 'must be true or false' }), environment: FormText }));
/** An audience's rules are any array here: the audience commands' checks say what is wrong in one. */
const AudienceForm = Type.Object({
  name: FormText,
  rules: Type.Array(Type.Unknown(), { 'x-error': 'must be an array of {attribute, values}' }),
});
const kAudienceForm = compileForm(AudienceForm);

/** `rules: [{attribute, values}]` as the audience commands take them, each entry read leniently. */
function audienceRules(rules: Static<typeof AudienceForm>['rules']): { attribute: string; values: string[] }[] {
  return rules.map((rule: unknown) => {
    const r = (rule ?? {}) as Record<string, unknown>;
    return {
      attribute: typeof r.attribute === 'string' ? r.attribute : '',
      values: Array.isArray(r.values) ? r.values.filter((v): v is string => typeof v === 'string') : [],
    };
  });
}

export const kProjectConsoleRoutes: readonly ApiRoute[] = [
  {
    // {name, kind: "single" | "multi", environments: [names]}; the writer checks the role and every field.
    method: 'POST',
    pattern: 'orgs/:orgId/projects',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = kProjectForm.read(call.received);
      return call.writer.call(kProjectCommands.projectCreate, {
        name: body.name,
        orgId: org.id,
        // The pattern admits these two only.
        kind: body.kind as 'single' | 'multi',
        environments: body.environments ?? [],
        principal: call.principal,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      return call.writer.call(kProjectCommands.envAdd, {
        projectId: access.project.id,
        name: kEnvironmentForm.read(call.received).name,
        principal: call.principal,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments/rename',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kEnvironmentRenameForm.read(call.received);
      return call.writer.call(kProjectCommands.envRename, {
        projectId: access.project.id,
        from: body.from,
        to: body.to,
        principal: call.principal,
      });
    },
  },
  {
    // `protected`: true or false; anything else is refused as the command refuses a bad name.
    method: 'POST',
    pattern: 'projects/:projectId/environments/protect',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kProtectForm.read(call.received);
      return call.writer.call(kProjectCommands.envProtect, {
        projectId: access.project.id,
        env: body.environment,
        protect: body.protected,
        principal: call.principal,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/audiences',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kAudienceForm.read(call.received);
      return call.writer.call(kProjectCommands.audienceCreate, {
        projectId: access.project.id,
        name: body.name,
        rules: audienceRules(body.rules),
        principal: call.principal,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'audiences/:audienceId',
    run(call) {
      const audience = requireAudience(call.store, call.params.audienceId!);
      projectAccess(call.store, call.user, audience.projectId, call.now);
      const body = kAudienceForm.read(call.received);
      return call.writer.call(kProjectCommands.audienceUpdate, {
        audienceId: audience.id,
        name: body.name,
        rules: audienceRules(body.rules),
        principal: call.principal,
      });
    },
  },
];
