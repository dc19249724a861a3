// The flags capability's web console routes: the console's project page (its flags) and flag page,
// reading them and every change to a flag.
import { patchResult, representFlag } from './representation.js';
import { type FlagState, hourlySeries, isStale, kDefaultStaleDays, staleBefore } from '../model/flags.js';
import { splitWeights } from './fractional-split.js';
import { projectAccess } from '../console-route/access.js';
import { flagAccess } from './flag-lookups.js';
import { Type } from '../typebox.js';
import { type ApiCall, type ApiRoute, requireReceived } from '../console-route/call.js';
import { compileForm, FormText, FormTexts } from '../console-route/forms.js';
import { kFlagCommands } from './command-table.js';
import { flagdServing } from './flagd-serving.js';
import { listFragments } from './records/fragment-records.js';
import { getUsage, listEnvironmentUsage, listFlags } from './records/flag-store.js';
import { flagEtag } from './flag-version.js';
import { listAudiences } from '../model/records/project-records.js';
import { projectLifecycle } from './lifecycle-facts.js';

const kRenameForm = compileForm(Type.Object({ name: FormText }));
const kDescribeForm = compileForm(Type.Object({ description: FormText }));
const kTagsForm = compileForm(Type.Object({ tags: FormTexts }));
const kCohortsForm = compileForm(Type.Object({ cohorts: FormTexts }));

/** The flag list's charts: evaluations per hour over the last day, the flag's and each environment's. */
const kListHours = 24;

export function projectView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const { project } = access;
  const before = staleBefore(call.now, kDefaultStaleDays);
  const stale: string[] = [];
  const hourly: Record<string, number[]> = {};
  const hourlyByEnvironment: Record<string, number[]> = {};
  // A state whose rule is a bare fractional split, as `on=10/off=90`: by `flagId` or `flagId:env`.
  const splits: Record<string, string> = {};
  const flags = listFlags(call.store, project.id).map((f) => {
    const states: [string, FlagState][] =
      f.kind === 'groupflag' ? Object.entries(f.environments).map(([e, s]) => [`${f.id}:${e}`, s]) : [[f.id, f.state]];
    for (const [key, state] of states) {
      const split = state.typed === undefined ? null : splitWeights(state.typed.targeting);
      if (split !== null) splits[key] = split;
    }
    const usage = getUsage(call.store, f.id);
    // The CLI's `flag stale` rule (src/model/flags.ts), at its default of days: the list's badge and filter.
    if (isStale(f, usage, before)) stale.push(f.id);
    hourly[f.id] = hourlySeries(usage?.hours, call.now, kListHours);
    if (f.kind === 'groupflag')
      for (const env of listEnvironmentUsage(call.store, f.id)) {
        const series = hourlySeries(env.hours, call.now, kListHours);
        if (series.some((n) => n > 0)) hourlyByEnvironment[`${f.id}:${env.environment}`] = series;
      }
    return representFlag(f, project, null, usage);
  });
  return {
    ...access,
    flags,
    stale,
    staleDays: kDefaultStaleDays,
    hourly,
    hourlyByEnvironment,
    splits,
    audiences: listAudiences(call.store, project.id),
  };
}

export function flagView(call: ApiCall) {
  const { flag, access } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
  return {
    ...access,
    flag: representFlag(flag, access.project, null, getUsage(call.store, flag.id)),
    // The flag's version, which the page sends back as If-Match with each change (flag-version.ts).
    etag: flagEtag(flag),
    // A group flag's flag-wide list, which the API never shows as such (spec: Flag-wide cohort list).
    flagWideCohorts: flag.kind === 'groupflag' ? flag.cohorts : null,
    // Whether flagd's flag sets serve it, per environment (docs/design.md §2c), as the Management API says.
    flagd: flagdServing(call.store, flag, access.project, access.org, call.now),
    audiences: listAudiences(call.store, access.project.id),
    // The project's shared fragments by name: what the rule builder's "matches shared fragment" offers.
    fragments: listFragments(call.store, access.project.id).map((f) => f.name),
  };
}

/** The project's lifecycle page (issue 99): every flag with its stage, archived ones too. */
export function lifecyclePageView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  return { ...access, flags: projectLifecycle(call.store, access.project, call.now, { stage: null, owner: null }) };
}

/** The flag page's and the lifecycle page's archive and restore: the API's commands, through the approvals gate. */
function archiveRoute(verb: 'archive' | 'restore'): ApiRoute {
  return {
    method: 'POST',
    pattern: `flags/:flagId/${verb}`,
    async run(call) {
      const { flag, access } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
      const input = { flagId: flag.id, principal: call.principal, ifMatch: call.ifMatch };
      const done = await call.writer.call(verb === 'archive' ? kFlagCommands.flagArchive : kFlagCommands.flagRestore, input);
      return representFlag(done, access.project, null, getUsage(call.store, flag.id));
    },
  };
}

export const kFlagConsoleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'projects/:projectId/lifecycle',
    run: lifecyclePageView,
  },
  archiveRoute('archive'),
  archiveRoute('restore'),
  {
    method: 'GET',
    pattern: 'projects/:projectId',
    run: projectView,
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/flags',
    async run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const flag = await call.writer.call(kFlagCommands.flagCreate, {
        projectId: access.project.id,
        received: requireReceived(call),
        principal: call.principal,
      });
      return representFlag(flag, access.project, null, undefined);
    },
  },
  {
    method: 'GET',
    pattern: 'flags/:flagId',
    run: flagView,
  },
  {
    // PATCH /api/v1/flags/{id}'s rules and texts: `env` as the API's query parameter, the body as received.
    method: 'PATCH',
    pattern: 'flags/:flagId',
    async run(call) {
      const { flag } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
      const env = call.query.get('env');
      const result = await call.writer.call(kFlagCommands.flagPatch, {
        flagId: flag.id,
        env,
        principal: call.principal,
        ifMatch: call.ifMatch,
        received: requireReceived(call),
      });
      return patchResult(result.changed, result.flag, env, getUsage(call.store, flag.id));
    },
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/rename',
    run: (call) =>
      call.writer.call(kFlagCommands.flagRename, {
        flagId: flagAccess(call.store, call.user, call.params.flagId!, call.now).flag.id,
        name: kRenameForm.read(call.received).name,
        principal: call.principal,
        ifMatch: call.ifMatch,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/describe',
    run: (call) =>
      call.writer.call(kFlagCommands.flagDescribe, {
        flagId: flagAccess(call.store, call.user, call.params.flagId!, call.now).flag.id,
        text: kDescribeForm.read(call.received).description,
        principal: call.principal,
        ifMatch: call.ifMatch,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/tags',
    run: (call) =>
      call.writer.call(kFlagCommands.flagTags, {
        flagId: flagAccess(call.store, call.user, call.params.flagId!, call.now).flag.id,
        tags: kTagsForm.read(call.received).tags,
        principal: call.principal,
        ifMatch: call.ifMatch,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/cohorts',
    run: (call) =>
      call.writer.call(kFlagCommands.flagCohorts, {
        flagId: flagAccess(call.store, call.user, call.params.flagId!, call.now).flag.id,
        cohorts: kCohortsForm.read(call.received).cohorts,
        principal: call.principal,
        ifMatch: call.ifMatch,
      }),
  },
  {
    method: 'DELETE',
    pattern: 'flags/:flagId',
    run: (call) =>
      call.writer.call(kFlagCommands.flagDelete, {
        flagId: flagAccess(call.store, call.user, call.params.flagId!, call.now).flag.id,
        principal: call.principal,
        ifMatch: call.ifMatch,
      }),
  },
];
