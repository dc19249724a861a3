// The shapes of what /console/api answers, as the console's pages read them: the answers the server
// declares (../api/answers.ts) and the records of src/model, imported as types only, so tsc erases every
// one of these imports and nothing of the server's code reaches the browser. Every module they come from
// is free of Node, as this folder's tsconfig checks.
import type { EnvironmentEntry, FlagRepresentation } from '../../flags/representation-shapes.js';
import type { ProjectAccess } from '../../console-route/project-access.js';
import type { ChangeRequestView, FlagPageView as FlagPageAnswer, FlagPlansView, ProjectView as ProjectAnswer } from '../api/answers.js';

export type {
  ActivityView,
  ApprovalsView,
  ChangeRequestView,
  FlagPlansView,
  FlagRequestsView,
  RequestEntry,
  RequestPageView,
  RequestsView,
  WaitingView,
  AuditView,
  HomeView,
  JoinInvitationView,
  MailView,
  MembersView,
  PlaygroundResult,
  PlaygroundView,
  SessionView,
  TokensView,
  ClientKeysView,
  WebhooksView,
  FragmentsView,
  LifecyclePageView,
  FlagCodeRefsView,
  MissingKeysView,
  ExperimentsView,
  ExperimentResultsPageView,
  ScimView,
} from '../api/answers.js';
export type { RolloutAction, RolloutBody } from '../../release-plans/schemas.js';
export type { Org, User } from '../../model/accounts.js';
export type { SsoSettingsView } from '../../sso/schemas.js';
export type { Audience, Project } from '../../model/projects.js';

export type Access = ProjectAccess;
/** What the browser reads of a change request a change opened (the console's 202 `{changeRequest}`). */
export type OpenedRequest = Pick<ChangeRequestView, 'id' | 'summary' | 'title' | 'approvals' | 'required'>;
/** A flag's state, flat or in one environment. */
export type FlatState = Pick<
  EnvironmentEntry,
  'enabled' | 'trafficPercentage' | 'cohorts' | 'audienceId' | 'variants' | 'defaultVariant' | 'targeting' | 'unleash'
>;
type KeysOfAny<U> = U extends unknown ? keyof U : never;
/** A union read as one object: the keys every member has as they are, the others optional. */
type EitherOf<U> = Pick<U, keyof U> & { [K in KeysOfAny<U>]?: U extends Record<K, infer V> ? V : never };
/**
 * A flag as the project and flag pages read it: the API's flat or environments form
 * (FlagRepresentation), read as one shape: the flat state absent from a group flag in environments
 * form, `environments` absent from a flat one.
 */
export type FlagView = EitherOf<FlagRepresentation>;
/** The project page's answer (GET projects/:projectId), its flags read as FlagView. */
export type ProjectView = Omit<ProjectAnswer, 'flags'> & { flags: FlagView[] };
/** What the flag page reads: the flag's answer (GET flags/:flagId), its flag read as FlagView, and its release plans' (GET flags/:flagId/plans). */
export type FlagPageView = Omit<FlagPageAnswer, 'flag'> & FlagPlansView & { flag: FlagView };
/** One of the flag's rollouts, with the actions the page offers on it. */
export type RolloutView = FlagPageView['rollouts'][number];
