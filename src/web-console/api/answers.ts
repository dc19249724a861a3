// What the console API's pages answer (GET session, home, a project, a flag, ...; the playground's POST),
// declared from the records of src/model and the Management API's bodies. The browser reads its answers
// through these types (browser/views.ts), and its tsconfig checks it with the DOM's declarations only:
// so this module, and everything it imports, declares nothing of Node's. The routes' own modules cannot
// be that (they call the writer and the store), so each route's answer is checked against its type here
// at build time (test/web-console/answer-types.ts), both ways.
import type { Membership, Org, Role, User } from '../../model/accounts.js';
import type { AuditEntry } from '../../model/audit.js';
import type { Invitation } from '../../model/invitations.js';
import type { MailMessage } from '../../model/mail.js';
import type { TokenStatus } from '../../model/permissions.js';
import type { Audience, Project } from '../../model/projects.js';
import type { FlagRepresentation } from '../../flags/representation-shapes.js';
import type { FlagLifecycle } from '../../flags/lifecycle-shapes.js';
import type { TokenDenialRecord, TokenRequestRecord, TokenView } from '../../model/tokens.js';
import type { FlagdServing } from '../../flags/flagd-serving-shape.js';
import type { RolloutAction, RolloutBody, ScheduledChangeBody } from '../../release-plans/schemas.js';
import type { DeliveryBody, WebhookBody } from '../../webhooks/schemas.js';
import type { FragmentBody } from '../../fragments/schemas.js';
import type { ProjectAccess } from '../../console-route/project-access.js';
import type { ExperimentBody, ExperimentResultsBody } from '../../experiments/schemas.js';
import type { ClientKeyBody } from '../../client-keys/schemas.js';
import type { ClientKeyUse } from '../../client-keys/client-key.js';

/** The approvals pages' answers: the approvals capability's (src/approvals/console-routes.ts). */
export type {
  ApprovalsView,
  ChangeRequestView,
  FlagRequestsView,
  RequestEntry,
  RequestPageView,
  RequestsView,
  WaitingView,
} from '../../approvals/console-answers.js';
/** The SCIM page's answer: the scim capability's (src/scim/console-routes.ts). */
export type { ScimView } from '../../scim/console-answers.js';
/** The code reference sections' answers: the code-refs capability's (src/code-refs/console-routes.ts). */
export type { FlagCodeRefsView, MissingKeysView } from '../../code-refs/console-answers.js';
/** The playground's answer: the evaluation capability's (src/evaluation/console-routes.ts). */
export type { PlaygroundResult, PlaygroundView } from '../../evaluation/console-answers.js';

/** GET projects/:projectId/experiments?env=: the environment's experiments, and the flags one may run on with the variants each answers there. */
export interface ExperimentsView extends ProjectAccess {
  env: string | null;
  experiments: ExperimentBody[];
  flags: { id: string; name: string; variants: string[] }[];
}

/** GET projects/:projectId/experiments/:key/results?env=: the Management API's results, as the same look takes them. */
export interface ExperimentResultsPageView extends ProjectAccess {
  env: string | null;
  results: ExperimentResultsBody;
}

/** GET session. */
export interface SessionView {
  user: User;
  csrfToken: string;
  expiresAt: number;
}

/** GET home: the user's organisations (with their projects), personal projects and live invitations. */
export interface HomeView {
  user: User;
  orgs: (Pick<Org, 'id' | 'name' | 'plan' | 'standing'> & { role: Role; canCreateProjects: boolean; projects: Project[] })[];
  personal: Project[];
  invitations: (Pick<Invitation, 'id' | 'role' | 'expiresAt'> & { orgName: string; invitedByName: string })[];
  canCreateOrgs: boolean;
}

/** POST join/invitation (no session: the mailed link's token): what the join page says before the invitee joins. */
export interface JoinInvitationView {
  orgName: string;
  email: string;
  role: Role;
  expiresAt: number;
}

/** GET mail: the messages the user may read (model/mail.ts's rule), newest first. */
export interface MailView {
  messages: (Pick<MailMessage, 'seq' | 'at' | 'to' | 'subject' | 'text' | 'sentAt' | 'failedAt' | 'attempts'> & {
    orgId: string | undefined;
    orgName: string | null;
  })[];
}

/** GET orgs/:orgId/members. Pending invitations are listed to those who may invite only. */
export interface MembersView {
  org: Org;
  role: Role;
  members: (Membership & { user: User | null })[];
  invitations: Pick<Invitation, 'id' | 'email' | 'role' | 'expiresAt'>[];
  canManage: boolean;
}

/** GET projects/:projectId/audit: a page of the log, newest first; `nextBefore` pages back. */
export interface AuditView {
  project: Project;
  can: ProjectAccess['can'];
  entries: AuditEntry[];
  nextBefore: number | null;
  flags: { id: string; name: string }[];
  audiences: { id: string; name: string }[];
  /** The members named in the entries' changes, by their `user:<id>` reference. */
  people: { ref: string; name: string }[];
  /** Who the actor filter offers: the organisation's members and the project's tokens, by `user:<id>` or `token:<id>`. */
  actors: { ref: string; name: string }[];
}

/** A token as the tokens page lists it. */
export interface TokenEntry extends TokenView {
  status: TokenStatus;
  createdByName: string;
  manageable: boolean;
  secretWorksUntil: number | null;
  graceRevocable: boolean;
}

/** GET projects/:projectId/tokens. */
export interface TokensView extends ProjectAccess {
  tokens: TokenEntry[];
  slotsUsed: number;
  slots: number;
}

/** GET tokens/:tokenId/activity. */
export interface ActivityView {
  project: Project;
  token: TokenView & { status: TokenStatus };
  lastUsedAt: number | null;
  recent: TokenRequestRecord[];
  denials: TokenDenialRecord[];
}

/**
 * GET projects/:projectId/client-keys: the project's client keys, revoked ones too, never a secret;
 * whether the user may make and revoke them, the uses a key may name, and how many may be live.
 */
export interface ClientKeysView extends ProjectAccess {
  clientKeys: ClientKeyBody[];
  canManage: boolean;
  uses: ClientKeyUse[];
  maxActive: number;
}

/** GET projects/:projectId/webhooks: each hook with its latest `shown` deliveries. */
export interface WebhooksView extends ProjectAccess {
  webhooks: (WebhookBody & { deliveries: DeliveryBody[]; more: boolean })[];
  shown: number;
}

/** GET projects/:projectId/fragments: the project's shared fragments, each with the flags whose rules name it. */
export interface FragmentsView extends ProjectAccess {
  fragments: (FragmentBody & { usedBy: string[] })[];
}

/** GET projects/:projectId/lifecycle: every flag of the project with its lifecycle, archived ones too (issue 99). */
export interface LifecyclePageView extends ProjectAccess {
  flags: FlagLifecycle[];
}

/** GET projects/:projectId: the flag list, with each flag's stale mark, hourly use and bare splits. */
export interface ProjectView extends ProjectAccess {
  flags: FlagRepresentation[];
  stale: string[];
  staleDays: number;
  hourly: Record<string, number[]>;
  /** A group flag's evaluations per hour in one environment, as `hourly`: by `flagId:env`, only where it was evaluated. */
  hourlyByEnvironment: Record<string, number[]>;
  /** A state whose rule is a bare fractional split, as `on=10/off=90`: by `flagId` or `flagId:env`. */
  splits: Record<string, string>;
  audiences: Audience[];
}

/** One of a flag's rollouts, with the actions the page offers on it and the CLI's texts of its steps and guard. */
export interface RolloutEntry extends RolloutBody {
  actions: RolloutAction[];
  stepLabels: string[];
  guardLine: string | null;
}

/** GET flags/:flagId. */
export interface FlagPageView extends ProjectAccess {
  flag: FlagRepresentation;
  /** The flag's version (its Management API ETag): the page sends it as If-Match with each change of the flag. */
  etag: string;
  flagWideCohorts: string[] | null;
  /** Whether flagd's flag sets serve the flag, per environment (GET /api/v1/flags/{id}/flagd's `flagd`). */
  flagd: FlagdServing[];
  audiences: Audience[];
  /** The project's shared fragments' names (the rule builder's "matches shared fragment"). */
  fragments: string[];
}

/** GET flags/:flagId/plans: the flag's release plans, as its page shows them. */
export interface FlagPlansView {
  schedules: ScheduledChangeBody[];
  rollouts: RolloutEntry[];
}
