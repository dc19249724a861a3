// The tokens capability's web console routes: the console's tokens page and a token's activity page,
// listing, creating, rotating, revoking.
import { requireToken } from '../model/records/lookups.js';
import { holdsTokenSlot, inRotationGrace, tokenStatus } from '../model/permissions.js';
import type { Token } from '../model/tokens.js';
import { Type } from '../typebox.js';
import { mayEndGrace, mayManageToken, projectAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, FormText, FormTexts } from '../console-route/forms.js';
import { kMaxActiveTokens, tokenView } from './token-commands.js';
import { kTokenCommands } from './command-table.js';
import { getActivity, listTokens } from '../model/records/token-records.js';
import { getUser } from '../model/records/org-records.js';

/** The writer checks each value (a permission, environments of the project, an expiry). */
const kTokenForm = compileForm(
  Type.Object({ name: FormText, permission: FormText, environments: Type.Optional(FormTexts), expires: Type.Optional(FormText) }),
);
/** No body: no grace period; `gracePeriodSeconds` is checked by the writer. */
const kRotateForm = compileForm(Type.Object({ gracePeriodSeconds: Type.Optional(Type.Unknown()) }));

function tokenAccess(call: ApiCall, tokenId: string): { token: Token; access: ReturnType<typeof projectAccess> } {
  const token = requireToken(call.store, tokenId);
  return { token, access: projectAccess(call.store, call.user, token.projectId, call.now) };
}

export function tokensView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const tokens = listTokens(call.store, access.project.id).map((t) => {
    const inGrace = inRotationGrace(t, call.now);
    return {
      ...tokenView(t),
      status: tokenStatus(t, call.now),
      createdByName: getUser(call.store, t.createdBy)?.name ?? t.createdBy,
      // The creator (not a Viewer) may rotate and revoke their own; Admins and Owners any (the writer checks again).
      manageable: mayManageToken(access, t, call.user.id, call.now),
      // A rotated token's old secret still working: until when, and whether this user may end it now (Revoke).
      secretWorksUntil: inGrace ? t.graceEndsAt! : null,
      graceRevocable: inGrace && mayEndGrace(access, t, call.user.id),
    };
  });
  // Expired tokens that were never revoked still take a slot (spec: Limits).
  const slotsUsed = tokens.filter(holdsTokenSlot).length;
  return { ...access, tokens, slotsUsed, slots: kMaxActiveTokens };
}
export type TokensView = ReturnType<typeof tokensView>;

export function activityView(call: ApiCall) {
  const { token, access } = tokenAccess(call, call.params.tokenId!);
  const activity = getActivity(call.store, token.id);
  return {
    project: access.project,
    token: { ...tokenView(token), status: tokenStatus(token, call.now) },
    lastUsedAt: activity?.lastUsedAt ?? null,
    recent: activity?.recent ?? [],
    denials: activity?.denials ?? [],
  };
}
export type ActivityView = ReturnType<typeof activityView>;

export const kTokenConsoleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'projects/:projectId/tokens',
    run: tokensView,
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/tokens',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kTokenForm.read(call.received);
      return call.writer.call(kTokenCommands.tokenCreate, {
        projectId: access.project.id,
        principal: call.principal,
        name: body.name,
        permission: body.permission,
        environments: body.environments ?? [],
        expires: body.expires,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'tokens/:tokenId/rotate',
    run: (call) =>
      call.writer.call(kTokenCommands.tokenRotate, {
        tokenId: tokenAccess(call, call.params.tokenId!).token.id,
        principal: call.principal,
        gracePeriodSeconds: kRotateForm.readOptional(call.received).gracePeriodSeconds,
      }),
  },
  {
    method: 'POST',
    pattern: 'tokens/:tokenId/revoke',
    run: (call) =>
      call.writer.call(kTokenCommands.tokenRevoke, {
        tokenId: tokenAccess(call, call.params.tokenId!).token.id,
        principal: call.principal,
      }),
  },
  {
    method: 'GET',
    pattern: 'tokens/:tokenId/activity',
    run: activityView,
  },
];
