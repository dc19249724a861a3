// The console API's answers as its routes make them, against the types the browser reads them by
// (src/web-console/api/answers.ts): each is assignable to the other and has the same fields. Checked at
// compile time, as TypeBox's test/static does: `npm run build` fails on a route whose answer drifts from
// its declared type. Nothing here runs.
import type * as Declared from '../../src/web-console/api/answers.js';
import type { approvalsView, flagRequestsView, requestPageView, requestsView, waitingView } from '../../src/approvals/console-routes.js';
import type { auditView } from '../../src/audit-log/console-routes.js';
import type { flagView, lifecyclePageView, projectView } from '../../src/flags/console-routes.js';
import type { mailView } from '../../src/mail/console-routes.js';
import type { homeView, membersView } from '../../src/orgs/console-routes.js';
import type { sessionView } from '../../src/sessions/console-routes.js';
import type { activityView, tokensView } from '../../src/tokens/console-routes.js';
import type { webhooksView } from '../../src/webhooks/console-routes.js';
import type { clientKeysView } from '../../src/client-keys/console-routes.js';
import type { fragmentsView } from '../../src/fragments/console-routes.js';
import type { scimView } from '../../src/scim/console-routes.js';
import type { experimentResultsPageView, experimentsView } from '../../src/experiments/console-routes.js';
import type { flagCodeRefsView, missingKeysView } from '../../src/code-refs/console-routes.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Mutually assignable, and no field the other lacks (an optional field would pass assignability). */
type Answers<Made, Read> = Same<Made, Read> extends true ? Same<keyof Made, keyof Read> : false;
type Holds<T extends true> = T;

export type AnswerChecks = [
  Holds<Answers<ReturnType<typeof sessionView>, Declared.SessionView>>,
  Holds<Answers<ReturnType<typeof homeView>, Declared.HomeView>>,
  Holds<Answers<ReturnType<typeof mailView>, Declared.MailView>>,
  Holds<Answers<ReturnType<typeof membersView>, Declared.MembersView>>,
  Holds<Answers<ReturnType<typeof auditView>, Declared.AuditView>>,
  Holds<Answers<ReturnType<typeof tokensView>, Declared.TokensView>>,
  Holds<Answers<ReturnType<typeof activityView>, Declared.ActivityView>>,
  Holds<Answers<ReturnType<typeof webhooksView>, Declared.WebhooksView>>,
  Holds<Answers<ReturnType<typeof clientKeysView>, Declared.ClientKeysView>>,
  Holds<Answers<ReturnType<typeof fragmentsView>, Declared.FragmentsView>>,
  Holds<Answers<ReturnType<typeof lifecyclePageView>, Declared.LifecyclePageView>>,
  Holds<Answers<ReturnType<typeof flagCodeRefsView>, Declared.FlagCodeRefsView>>,
  Holds<Answers<ReturnType<typeof missingKeysView>, Declared.MissingKeysView>>,
  Holds<Answers<ReturnType<typeof projectView>, Declared.ProjectView>>,
  Holds<Answers<ReturnType<typeof flagView>, Declared.FlagPageView>>,
  Holds<Answers<ReturnType<typeof requestsView>, Declared.RequestsView>>,
  Holds<Answers<ReturnType<typeof requestPageView>, Declared.RequestPageView>>,
  Holds<Answers<ReturnType<typeof flagRequestsView>, Declared.FlagRequestsView>>,
  Holds<Answers<ReturnType<typeof waitingView>, Declared.WaitingView>>,
  Holds<Answers<ReturnType<typeof approvalsView>, Declared.ApprovalsView>>,
  Holds<Answers<ReturnType<typeof scimView>, Declared.ScimView>>,
  Holds<Answers<ReturnType<typeof experimentsView>, Declared.ExperimentsView>>,
  Holds<Answers<Awaited<ReturnType<typeof experimentResultsPageView>>, Declared.ExperimentResultsPageView>>,
];
