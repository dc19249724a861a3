// A project's events settings as a writer command (docs/events.md: Raw events): whether, and for how
// many days, its raw events are kept. A project-wide setting, so a token limited to some environments
// may not change it; a person needs the Admin or Owner role (it decides what personal data is kept).
// Audited as `events.settings` with the retention before and after.
import { actorInProject, type Principal, writeAudit } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import type { Project } from '../model/projects.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import { type EventSettings, EventSettingsPatch } from './schemas.js';
import { putProject } from '../model/records/project-records.js';

const kPatchValidator = compileValidator(EventSettingsPatch, { quoteKeys: false });

/** A project's events settings as the API shows them. */
export function eventSettingsOf(project: Project): EventSettings {
  return { rawEventRetentionDays: project.rawEventRetentionDays ?? null };
}

export interface EventSettingsSetInput {
  principal: Principal;
  /** The project, for a person or the operator (a token changes its own project's). */
  projectId: string;
  /** The body, as the Management API received it; the command line sends its options as JSON (jsonBody). */
  received: ReceivedBody;
}

export function eventSettingsSet(w: StoreWriter, input: EventSettingsSetInput, now: number): EventSettings {
  const { project, actor } = actorInProject(w, input.principal, () => input.projectId, 'configure', now);
  if (actor.environments.length > 0)
    throw new FlagwireError(
      'ENVIRONMENT_NOT_PERMITTED',
      `This token is limited to ${actor.environments.join(', ')}; the events settings are the whole project's. Use a token of every environment.`,
    );
  const body = checkedBody(input.received, kPatchValidator);
  const before = eventSettingsOf(project);
  if (body.rawEventRetentionDays === undefined || body.rawEventRetentionDays === before.rawEventRetentionDays) return before;
  const after = body.rawEventRetentionDays;
  const { rawEventRetentionDays: _, ...rest } = project;
  // Absent when off, so a project that never kept raw events keeps its record as it was.
  putProject(w, after === null ? rest : { ...rest, rawEventRetentionDays: after });
  writeAudit(
    w,
    actor,
    {
      projectId: project.id,
      action: 'events.settings',
      changes: { rawEventRetentionDays: { before: before.rawEventRetentionDays, after } },
    },
    now,
  );
  return { rawEventRetentionDays: after };
}
