// The MCP sessions a front end keeps (spec: Streamable HTTP, Session Management), bounded in count and
// idle time so that no client, however many sessions it opens, makes the node hold more than
// `maxSessions` of them. A session past its idle time is ended when next looked at or when room is made;
// at the bound, the least recently used one is ended (its client gets 404 and starts another, as the
// spec says a client does). The map's order is the order of use: a session used is moved to its end.

/** What a session holds: whatever the transport needs closing, the token that opened it, its last use. */
export interface McpSession {
  readonly id: string;
  /** Only the token that opened a session may use it: another token's request is answered as for no session. */
  readonly tokenId: string;
  usedAt: number;
  close(): void;
}

/** A front end's sessions, each an S (a session and what its transport keeps). */
export class McpSessions<S extends McpSession> {
  private readonly sessions = new Map<string, S>();

  constructor(private readonly bounds: { readonly maxSessions: number; readonly sessionIdleMs: number }) {}

  get size(): number {
    return this.sessions.size;
  }

  /** The session `id` of `tokenId`, marked used at `now`; null when there is none (ended, expired, another token's). */
  use(id: string, tokenId: string, now: number): S | null {
    const session = this.sessions.get(id);
    if (session === undefined || session.tokenId !== tokenId) return null;
    if (now - session.usedAt > this.bounds.sessionIdleMs) {
      this.end(id);
      return null;
    }
    this.sessions.delete(id);
    session.usedAt = now;
    this.sessions.set(id, session);
    return session;
  }

  /** Room for one more session at `now`: the idle ones ended, then the least recently used until it fits. */
  makeRoom(now: number): void {
    for (const session of this.sessions.values()) {
      if (now - session.usedAt <= this.bounds.sessionIdleMs) break;
      this.end(session.id);
    }
    while (this.sessions.size >= this.bounds.maxSessions) {
      const oldest = this.sessions.keys().next().value as string;
      this.end(oldest);
    }
  }

  /** Keeps `session`, made after makeRoom. */
  add(session: S): void {
    this.sessions.set(session.id, session);
  }

  end(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    session.close();
  }
}
