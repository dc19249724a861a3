// The web console's project routes: creating an organisation's project (its Admin or Owner), and the
// project settings page's environments and audiences.
import { FlagwireError } from '../errors.js';
import { requireAudience } from '../model/lookups.js';
import { orgAccess, projectAccess } from '../web-console/access.js';
import { type ApiRoute, form, text, texts } from '../web-console/api/call.js';
import { kProjectCommands } from './project-commands.js';

/** `rules: [{attribute, values}]` as the audience commands take them (their checks say what is wrong). */
function audienceRules(body: Record<string, unknown>): { attribute: string; values: string[] }[] {
  const rules = body.rules;
  if (!Array.isArray(rules)) throw new FlagwireError('INVALID_REQUEST', '"rules" must be an array of {attribute, values}');
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
    pattern: 'projects/:projectId/environments',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      return call.writer.call(kProjectCommands.envAdd, {
        projectId: access.project.id,
        name: text(form(call), 'name'),
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments/rename',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = form(call);
      return call.writer.call(kProjectCommands.envRename, {
        projectId: access.project.id,
        from: text(body, 'from'),
        to: text(body, 'to'),
        asUserId: call.user.id,
      });
    },
  },
  {
    // `protected`: true or false; anything else is refused as the command refuses a bad name.
    method: 'POST',
    pattern: 'projects/:projectId/environments/protect',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = form(call);
      if (typeof body.protected !== 'boolean') throw new FlagwireError('INVALID_REQUEST', '"protected" must be true or false');
      return call.writer.call(kProjectCommands.envProtect, {
        projectId: access.project.id,
        env: text(body, 'environment'),
        protect: body.protected,
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/audiences',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = form(call);
      return call.writer.call(kProjectCommands.audienceCreate, {
        projectId: access.project.id,
        name: text(body, 'name'),
        rules: audienceRules(body),
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'audiences/:audienceId',
    run(call) {
      const audience = requireAudience(call.store, call.params.audienceId!);
      projectAccess(call.store, call.user, audience.projectId, call.now);
      const body = form(call);
      return call.writer.call(kProjectCommands.audienceUpdate, {
        audienceId: audience.id,
        name: text(body, 'name'),
        rules: audienceRules(body),
        asUserId: call.user.id,
      });
    },
  },
];
