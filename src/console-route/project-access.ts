// What the web console's page is told of a project a signed-in user reaches (access.ts decides it): a
// module of its own, which the browser's code reads, so that it names none of the store's records.
import type { Org } from '../model/accounts.js';
import type { ProjectRole } from '../model/permissions.js';
import type { Project } from '../model/projects.js';

export interface ProjectAccess {
  project: Project;
  org: Org | null;
  role: ProjectRole;
  /** Controls the page offers; the writer commands enforce the same rules. */
  can: {
    editFlags: boolean;
    createTokens: boolean;
    /** Rotate or revoke any token of the project (Admin, Owner); creators may manage their own. */
    manageAllTokens: boolean;
    /** Below Teams (or lapsed) tokens are shown read-only. */
    tokensReadOnly: boolean;
    /** Environments and audiences. */
    configure: boolean;
    /** Make and delete webhooks, send a delivery again: whoever may change flags (the writer's actorFor, editFlags). */
    manageWebhooks: boolean;
  };
}
