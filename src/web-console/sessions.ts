// Web console sessions: signing in (password check, rate limits, a fresh session id), finding the
// session of a request by its cookie, and signing out. Sessions live in the store, so every process and
// thread serving the console sees the same ones, and a sign-out ends the session everywhere at once.
import { kInvitationCommands } from '../invitations/command-table.js';
import { kSessionCommands } from '../sessions/command-table.js';
import { cookieValue, freshSession, kSessionCookie, kSessionIdLength } from '../sessions/session-cookie.js';
import { passwordSignInRefusal } from '../sso/lockout.js';
import type { Clock } from '../clock.js';
import { FlagwireError } from '../errors.js';
import type { User } from '../model/accounts.js';
import type { JoinInvitationView } from './api/answers.js';
import { hashSecret, randomId } from '../model/ids.js';
import { type Invitation, isInvitationLive } from '../model/invitations.js';
import { notFoundDetail } from '../model/records/lookups.js';
import { hashPassword, kMaxPasswordLength, passwordProblem, verifyPassword } from '../model/passwords.js';
import type { Session } from '../model/sessions.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { type Static, Type } from '../typebox.js';
import type { WriterClient } from '../writer/client.js';
import type { SignInLimits } from '../http/sign-in-limits.js';
import { getOrg, getUser, findUserByEmail } from '../model/records/org-records.js';
import { getInvitation } from '../model/records/invitation-records.js';
import { getCredential, getSession } from '../model/records/session-records.js';

export interface SignedIn {
  /** The new session's id: only ever in the Set-Cookie of this answer. */
  id: string;
  session: Session;
  user: User;
}

/** What the sign-in page sends; anything else is told what to send. */
export const SignInRequest = Type.Object(
  { email: Type.String(), password: Type.String() },
  { 'x-error': 'Send {"email": "...", "password": "..."} as JSON.' },
);
export type SignInRequest = Static<typeof SignInRequest>;

/** What the join page sends: the mailed link's invitation id and token, and the new user's name and password. */
export const JoinRequest = Type.Object(
  { invitationId: Type.String(), token: Type.String(), name: Type.String(), password: Type.String() },
  { 'x-error': 'Send {"invitationId", "token", "name", "password"} as JSON strings.' },
);
export type JoinRequest = Static<typeof JoinRequest>;

/** What the join page sends to read its invitation before joining: the mailed link's id and token. */
export const InvitationRequest = Type.Object(
  { invitationId: Type.String(), token: Type.String() },
  { 'x-error': 'Send {"invitationId", "token"} as JSON strings.' },
);
export type InvitationRequest = Static<typeof InvitationRequest>;

export interface CurrentSession {
  session: Session;
  user: User;
}

export class ConsoleSessions {
  /**
   * Checked against when the e-mail address is unknown, so that answer takes as long as a wrong password.
   * Made by the first sign-in, whatever its address, not at start: a scrypt hash is slow on purpose, and
   * every node's start paid for it (issue 57 item 2); every first sign-in waits for it alike.
   */
  private decoy: Promise<string> | null = null;

  constructor(
    private readonly store: SnapshotReader,
    private readonly writer: WriterClient,
    private readonly clock: Clock,
    private readonly limits: SignInLimits,
    private readonly sessionMs: number,
  ) {}

  async signIn(email: string, password: string, address: string): Promise<SignedIn> {
    const now = this.clock.now();
    const attempt = this.limits.reserve(address, email, now);
    let user: User | undefined;
    try {
      if (password.length > kMaxPasswordLength * 2)
        throw new FlagwireError('INVALID_REQUEST', 'the password is longer than any password Flagwire accepts');
      user = await this.limits.checking(async () => {
        this.decoy ??= hashPassword(randomId(24));
        const decoy = await this.decoy;
        this.store.resetReadTxn();
        const found = findUserByEmail(this.store, email.trim());
        const credential = found === undefined ? undefined : getCredential(this.store, found.id);
        const ok = (await verifyPassword(password, credential?.passwordHash ?? decoy)) && credential !== undefined;
        return ok ? found : undefined;
      });
    } catch (err) {
      // Refused unchecked (too long, too many checks at once) or failed for the server's reasons: not a failed sign-in.
      this.limits.giveBack(attempt);
      throw err;
    }
    // A wrong password keeps its reservation: that is the failure counted.
    if (user === undefined) throw new FlagwireError('SIGN_IN_FAILED', 'The e-mail address or the password is not right.');
    this.limits.giveBack(attempt);
    // Told only to whoever knows the password: an organisation of theirs signs in by single sign-on only.
    const ssoOnly = passwordSignInRefusal(this.store, user.id);
    if (ssoOnly !== null) throw new FlagwireError('FORBIDDEN', ssoOnly);
    return this.start(user, now);
  }

  /**
   * The mailed invitation link used (invitationJoin): the new user, a member, signed in. The password
   * rules are `flagwire user password`'s. The token is not guessable (190 bits), so no failure limit
   * counts here; a link that cannot work is refused before any scrypt, and the writer checks it again,
   * in the change that uses it up.
   */
  async join(request: JoinRequest): Promise<SignedIn> {
    const problem = passwordProblem(request.password);
    if (problem !== null) throw new FlagwireError('INVALID_REQUEST', problem);
    const { tokenHash } = this.liveInvitation(request);
    const passwordHash = await this.limits.checking(() => hashPassword(request.password));
    const { user } = await this.writer.call(kInvitationCommands.invitationJoin, {
      invitationId: request.invitationId,
      tokenHash,
      name: request.name,
      passwordHash,
    });
    return this.start(user, this.clock.now());
  }

  /**
   * The invitation a mailed link names, for its join page: the organisation, the address and the role.
   * The link's token is the credential, as for join; a link that cannot work is the same 404.
   */
  invitation(request: InvitationRequest): JoinInvitationView {
    const { invitation } = this.liveInvitation(request);
    const orgName = getOrg(this.store, invitation.orgId)?.name ?? invitation.orgId;
    return { orgName, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt };
  }

  /** The live invitation the link names, and its token's hash; a 404 for a wrong token, a used, expired or unknown invitation. */
  private liveInvitation(request: InvitationRequest): { invitation: Invitation; tokenHash: string } {
    const tokenHash = hashSecret(request.token);
    this.store.resetReadTxn();
    const invitation = getInvitation(this.store, request.invitationId);
    if (invitation?.linkHash !== tokenHash || !isInvitationLive(invitation, this.clock.now())) {
      throw new FlagwireError('NOT_FOUND', notFoundDetail('invitation', request.invitationId));
    }
    return { invitation, tokenHash };
  }

  private async start(user: User, now: number): Promise<SignedIn> {
    const { id, session: fresh } = freshSession(now, this.sessionMs);
    const session = { ...fresh, userId: user.id };
    await this.writer.call(kSessionCommands.sessionStart, session);
    return { id, session: { ...session, createdAt: now }, user };
  }

  /** The request's session, or null when it has none, or one that expired or was ended. */
  current(cookieHeader: string): CurrentSession | null {
    const id = cookieValue(cookieHeader, kSessionCookie);
    if (id === null || id.length !== kSessionIdLength) return null;
    this.store.resetReadTxn();
    const session = getSession(this.store, hashSecret(id));
    if (session === undefined || session.expiresAt <= this.clock.now()) return null;
    const user = getUser(this.store, session.userId);
    return user === undefined ? null : { session, user };
  }

  async signOut(session: Session): Promise<void> {
    await this.writer.call(kSessionCommands.sessionEnd, { idHash: session.idHash });
  }
}
