// The console's project settings: environments and audiences.
import { FlagwireError } from '../../errors.js';
import { projectAccess } from '../access.js';
import { type Static, Type } from '../../typebox.js';
import type { ApiRoute } from './call.js';
import { compileForm, FormText } from '../forms.js';

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

export const kSettingsRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      return call.writer.call('envAdd', {
        projectId: access.project.id,
        name: kEnvironmentForm.read(call.received).name,
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments/rename',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kEnvironmentRenameForm.read(call.received);
      return call.writer.call('envRename', {
        projectId: access.project.id,
        from: body.from,
        to: body.to,
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
      const body = kProtectForm.read(call.received);
      return call.writer.call('envProtect', {
        projectId: access.project.id,
        env: body.environment,
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
      const body = kAudienceForm.read(call.received);
      return call.writer.call('audienceCreate', {
        projectId: access.project.id,
        name: body.name,
        rules: audienceRules(body.rules),
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'audiences/:audienceId',
    run(call) {
      const audience = call.store.getAudience(call.params.audienceId!);
      if (audience === undefined) throw new FlagwireError('NOT_FOUND', `No audience with id "${call.params.audienceId}" exists.`);
      projectAccess(call.store, call.user, audience.projectId, call.now);
      const body = kAudienceForm.read(call.received);
      return call.writer.call('audienceUpdate', {
        audienceId: audience.id,
        name: body.name,
        rules: audienceRules(body.rules),
        asUserId: call.user.id,
      });
    },
  },
];
