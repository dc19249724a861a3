// The web console's JSON endpoints under /console/api: one table of routes, each a method, a path
// pattern and what it does. Reads check that the user belongs to the project (access.ts); every change
// is one writer command, the same function the CLI and the Management API call, with the signed-in
// user as `asUserId`, so roles, plans and texts are the writer's.
import { FlagwireError } from '../errors.js';
import { compilePattern, matchPath } from '../http/route-pattern.js';
import type { User } from '../model/accounts.js';
import { isInvitationLive } from '../model/invitations.js';
import { requireFlag, requireToken } from '../model/lookups.js';
import { can, holdsTokenSlot, tokenStatus } from '../model/permissions.js';
import { readableMail } from '../model/mail.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { Session } from '../model/sessions.js';
import type { Token } from '../model/tokens.js';
import { representFlag, patchResult } from '../api/representation.js';
import type { StoreReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { kMaxActiveTokens, tokenView } from '../tokens/token-commands.js';
import { mayManageToken, orgAccess, projectAccess } from './access.js';

/** What a handler gets: the request's values (read before any await), the user and the store. */
export interface ApiCall {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as received (POST, PATCH), for the writer to parse with the API's rules. */
  received: ReceivedBody | null;
  user: User;
  session: Session;
  store: StoreReader;
  writer: WriterClient;
  now: number;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Segments after /console/api/; `:name` matches one segment. */
  pattern: string;
  run(call: ApiCall): unknown;
}

/** A JSON object body parsed for the console's own forms (not flag bodies: those go to the writer as received). */
function form(call: ApiCall): Record<string, unknown> {
  const bytes = call.received?.bytes;
  let value: unknown;
  try {
    value = bytes === undefined || bytes.length === 0 ? undefined : JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FlagwireError('INVALID_REQUEST', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

function text(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string') throw new FlagwireError('INVALID_REQUEST', `"${key}" must be a string`);
  return value;
}

function texts(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new FlagwireError('INVALID_REQUEST', `"${key}" must be an array of strings`);
  return value as string[];
}

function requireReceived(call: ApiCall): ReceivedBody {
  return call.received ?? { bytes: new Uint8Array(0), contentType: 'application/json' };
}

/** The flag, if the user may see its project. */
function flagAccess(call: ApiCall, flagId: string) {
  const flag = requireFlag(call.store, flagId);
  return { flag, access: projectAccess(call.store, call.user, flag.projectId, call.now) };
}

function tokenAccess(call: ApiCall, tokenId: string): { token: Token; access: ReturnType<typeof projectAccess> } {
  const token = requireToken(call.store, tokenId);
  return { token, access: projectAccess(call.store, call.user, token.projectId, call.now) };
}

const kDefaultAuditLimit = 25;
const kMaxAuditLimit = 200;
/** Entries read per page when filtering, at most, before the page is answered short (with nextBefore). */
const kAuditScan = 2000;

function pageNumber(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const raw = query.get(name);
  if (raw === null || raw === '') return null;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new FlagwireError('INVALID_REQUEST', `${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

export const kApiRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'session',
    run: (call) => ({ user: call.user, csrfToken: call.session.csrfToken, expiresAt: call.session.expiresAt }),
  },
  {
    // The first page: the organisations (with their projects) and the personal projects of the user, by name.
    method: 'GET',
    pattern: 'home',
    run(call) {
      const r = call.store;
      const projects = r.listProjects();
      const orgs = r.listOrgs().flatMap((org) => {
        const role = r.getRole(org.id, call.user.id);
        if (role === undefined) return [];
        return [
          {
            id: org.id,
            name: org.name,
            plan: org.plan,
            standing: org.standing,
            role,
            projects: projects.filter((p) => p.orgId === org.id),
          },
        ];
      });
      const personal = projects.filter((p) => p.orgId === null && p.ownerUserId === call.user.id);
      const invitations = call.store
        .listEmailInvitations(call.user.email)
        .filter((i) => isInvitationLive(i, call.now))
        .map((i) => ({
          id: i.id,
          role: i.role,
          expiresAt: i.expiresAt,
          orgName: r.getOrg(i.orgId)?.name ?? i.orgId,
          invitedByName: r.getUser(i.invitedBy)?.name ?? i.invitedBy,
        }));
      return { user: call.user, orgs, personal, invitations };
    },
  },
  {
    method: 'GET',
    pattern: 'projects/:projectId',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const { project } = access;
      const flags = call.store.listFlags(project.id).map((f) => representFlag(f, project, null, call.store.getUsage(f.id)));
      return { ...access, flags, audiences: call.store.listAudiences(project.id) };
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/flags',
    async run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const flag = await call.writer.call('consoleFlagCreate', {
        projectId: access.project.id,
        received: requireReceived(call),
        asUserId: call.user.id,
      });
      return representFlag(flag, access.project, null, undefined);
    },
  },
  {
    method: 'GET',
    pattern: 'flags/:flagId',
    run(call) {
      const { flag, access } = flagAccess(call, call.params.flagId!);
      return {
        ...access,
        flag: representFlag(flag, access.project, null, call.store.getUsage(flag.id)),
        // A group flag's flag-wide list, which the API never shows as such (spec: Flag-wide cohort list).
        flagWideCohorts: flag.kind === 'groupflag' ? flag.cohorts : null,
        audiences: call.store.listAudiences(access.project.id),
      };
    },
  },
  {
    // PATCH /api/v1/flags/{id}'s rules and texts: `env` as the API's query parameter, the body as received.
    method: 'PATCH',
    pattern: 'flags/:flagId',
    async run(call) {
      const { flag } = flagAccess(call, call.params.flagId!);
      const env = call.query.get('env');
      const result = await call.writer.call('consoleFlagPatch', {
        flagId: flag.id,
        env,
        asUserId: call.user.id,
        received: requireReceived(call),
      });
      return patchResult(result.changed, result.flag, env, call.store.getUsage(flag.id));
    },
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/rename',
    run: (call) =>
      call.writer.call('flagRename', {
        flagId: flagAccess(call, call.params.flagId!).flag.id,
        name: text(form(call), 'name'),
        asUserId: call.user.id,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/describe',
    run: (call) =>
      call.writer.call('flagDescribe', {
        flagId: flagAccess(call, call.params.flagId!).flag.id,
        text: text(form(call), 'description'),
        asUserId: call.user.id,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/tags',
    run: (call) =>
      call.writer.call('flagTags', {
        flagId: flagAccess(call, call.params.flagId!).flag.id,
        tags: texts(form(call), 'tags'),
        asUserId: call.user.id,
      }),
  },
  {
    method: 'POST',
    pattern: 'flags/:flagId/cohorts',
    run: (call) =>
      call.writer.call('flagCohorts', {
        flagId: flagAccess(call, call.params.flagId!).flag.id,
        cohorts: texts(form(call), 'cohorts'),
        asUserId: call.user.id,
      }),
  },
  {
    method: 'DELETE',
    pattern: 'flags/:flagId',
    run: (call) => call.writer.call('flagDelete', { flagId: flagAccess(call, call.params.flagId!).flag.id, asUserId: call.user.id }),
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      return call.writer.call('envAdd', { projectId: access.project.id, name: text(form(call), 'name'), asUserId: call.user.id });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/environments/rename',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = form(call);
      return call.writer.call('envRename', {
        projectId: access.project.id,
        from: text(body, 'from'),
        to: text(body, 'to'),
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
      return call.writer.call('audienceCreate', {
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
      const audience = call.store.getAudience(call.params.audienceId!);
      if (audience === undefined) throw new FlagwireError('NOT_FOUND', `No audience with id "${call.params.audienceId}" exists.`);
      projectAccess(call.store, call.user, audience.projectId, call.now);
      const body = form(call);
      return call.writer.call('audienceUpdate', {
        audienceId: audience.id,
        name: text(body, 'name'),
        rules: audienceRules(body),
        asUserId: call.user.id,
      });
    },
  },
  {
    method: 'GET',
    pattern: 'projects/:projectId/tokens',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const tokens = call.store.listTokens(access.project.id).map((t) => ({
        ...tokenView(t),
        status: tokenStatus(t, call.now),
        createdByName: call.store.getUser(t.createdBy)?.name ?? t.createdBy,
        // The creator (not a Viewer) may rotate and revoke their own; Admins and Owners any (the writer checks again).
        manageable: mayManageToken(access, t, call.user.id, call.now),
      }));
      // Expired tokens that were never revoked still take a slot (spec: Limits).
      const slotsUsed = tokens.filter(holdsTokenSlot).length;
      return { ...access, tokens, slotsUsed, slots: kMaxActiveTokens };
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/tokens',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = form(call);
      return call.writer.call('tokenCreate', {
        projectId: access.project.id,
        asUserId: call.user.id,
        name: text(body, 'name'),
        permission: text(body, 'permission'),
        environments: body.environments === undefined ? [] : texts(body, 'environments'),
        expires: body.expires === undefined ? undefined : text(body, 'expires'),
      });
    },
  },
  {
    method: 'POST',
    pattern: 'tokens/:tokenId/rotate',
    run: (call) => call.writer.call('tokenRotate', { tokenId: tokenAccess(call, call.params.tokenId!).token.id, asUserId: call.user.id }),
  },
  {
    method: 'POST',
    pattern: 'tokens/:tokenId/revoke',
    run: (call) => call.writer.call('tokenRevoke', { tokenId: tokenAccess(call, call.params.tokenId!).token.id, asUserId: call.user.id }),
  },
  {
    method: 'GET',
    pattern: 'tokens/:tokenId/activity',
    run(call) {
      const { token, access } = tokenAccess(call, call.params.tokenId!);
      const activity = call.store.getActivity(token.id);
      return {
        project: access.project,
        token: { ...tokenView(token), status: tokenStatus(token, call.now) },
        lastUsedAt: activity?.lastUsedAt ?? null,
        recent: activity?.recent ?? [],
        denials: activity?.denials ?? [],
      };
    },
  },
  {
    // Newest first; `before` pages back (the previous page's nextBefore); `flag` and `actor` filter.
    method: 'GET',
    pattern: 'projects/:projectId/audit',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const limit = pageNumber(call.query, 'limit', 1, kMaxAuditLimit) ?? kDefaultAuditLimit;
      let before = pageNumber(call.query, 'before', 1, Number.MAX_SAFE_INTEGER);
      const flag = call.query.get('flag') || null;
      const actor = call.query.get('actor') || null;
      const entries = [];
      let scanned = 0;
      let more = false;
      // Read in pages of the store's order until the page is full: filters keep the log's order and paging.
      while (entries.length < limit && scanned < kAuditScan) {
        const batch = call.store.listAudit(access.project.id, { limit: 100, before });
        scanned += batch.length;
        for (const entry of batch) {
          before = entry.seq;
          if ((flag === null || entry.flagId === flag) && (actor === null || entry.actor === actor)) entries.push(entry);
          if (entries.length === limit) break;
        }
        if (batch.length < 100) break;
      }
      if (entries.length === limit || scanned >= kAuditScan)
        more = call.store.listAudit(access.project.id, { limit: 1, before }).length > 0;
      const flags = call.store.listFlags(access.project.id).map((f) => ({ id: f.id, name: f.name }));
      return { project: access.project, entries, nextBefore: more ? before : null, flags };
    },
  },
  {
    method: 'GET',
    pattern: 'orgs/:orgId/members',
    run(call) {
      const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
      const members = call.store.listMembers(org.id).map((m) => ({ ...m, user: call.store.getUser(m.userId) ?? null }));
      const canManage = can(role, 'manageMembers');
      // Pending invitations name addresses: shown to those who may invite, as the writer's rule.
      const invitations = canManage
        ? call.store
            .listOrgInvitations(org.id)
            .filter((i) => isInvitationLive(i, call.now))
            .map(({ id, email, role: invited, expiresAt }) => ({ id, email, role: invited, expiresAt }))
        : [];
      return { org, role, members, invitations, canManage };
    },
  },
  {
    method: 'POST',
    pattern: 'orgs/:orgId/members',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = form(call);
      return call.writer.call('orgAddMember', {
        orgId: org.id,
        userId: text(body, 'userId'),
        role: text(body, 'role') as never,
        asUserId: call.user.id,
      });
    },
  },
  {
    // An invitation, not a membership: the person joins by accepting it (invitation-commands.ts).
    method: 'POST',
    pattern: 'orgs/:orgId/invitations',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = form(call);
      return call.writer.call('orgInvite', { orgId: org.id, email: text(body, 'email'), role: text(body, 'role'), asUserId: call.user.id });
    },
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/accept',
    run: (call) => call.writer.call('invitationAccept', { invitationId: call.params.invitationId!, asUserId: call.user.id }),
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/decline',
    run: (call) => call.writer.call('invitationDecline', { invitationId: call.params.invitationId!, asUserId: call.user.id }),
  },
  {
    // The signed-in user's own mail, by the one rule of who reads a message (model/mail.ts).
    method: 'GET',
    pattern: 'mail',
    run(call) {
      const messages = readableMail(call.store, call.user).map(({ seq, at, to, orgId, subject, text, sentAt, failedAt, attempts }) => ({
        seq,
        at,
        to,
        orgId,
        orgName: orgId === undefined ? null : (call.store.getOrg(orgId)?.name ?? null),
        subject,
        text,
        sentAt,
        failedAt,
        attempts,
      }));
      return { messages };
    },
  },
];

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

export interface MatchedRoute {
  route: ApiRoute;
  params: Record<string, string>;
}

const kCompiledRoutes = kApiRoutes.map((route) => ({ route, path: compilePattern(route.pattern) }));

/** The route for `method` and the path after /console/api/, or why there is none (404 or 405-as-404). */
export function matchApiRoute(method: string, rest: string): MatchedRoute {
  let pathMatched = false;
  for (const { route, path } of kCompiledRoutes) {
    const params = matchPath(path, rest);
    if (params === null) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  throw new FlagwireError(
    'NOT_FOUND',
    pathMatched ? `${method} is not a method of /console/api/${rest}.` : `There is no /console/api/${rest}.`,
  );
}
