// A relay's follow of its upstream as the rest of the node sees it (src/relay/upstream-follower.ts
// follows; the writer thread reports it; readiness, the log, the sync service, a refusal and the relays
// below read it): plain data and the rules read from it, so that what reads it needs nothing of the
// relay's wire or its client.

/**
 * The primary's reachability as a relay that follows another relay sees it: the node at the top of the
 * chain (its URL as the relay above knows it), whether the chain to it is followed now, when it last said
 * anything (Date.now() there), and why not. Sent on every payload by an upstream that is itself a relay;
 * absent from an upstream that is the primary.
 */
export interface PrimaryReport {
  url: string;
  connected: boolean;
  heardAt: number | null;
  problem: string | null;
}

/** What a relay knows of its own follow (RelayStatus, in part): what the nodes below it and its refusals are told. */
export interface FollowState {
  upstream: string;
  connected: boolean;
  heardAt: number | null;
  problem: { text: string } | null;
  primary: PrimaryReport | null;
}

/** The node changes are made on, for a relay: its upstream's primary, or its upstream when that is the primary. */
export function primaryUrlOf(state: Pick<FollowState, 'upstream' | 'primary'>): string {
  return state.primary?.url ?? state.upstream;
}

/**
 * What a relay tells the relays below it of the primary (absent when it is the primary itself): its own
 * upstream when that is the primary; else what that upstream reported, unless the relay cannot follow
 * its upstream now, which cuts the chain to the primary.
 */
export function primaryReportOf(state: FollowState | null): PrimaryReport | undefined {
  if (state === null) return undefined;
  const problem = state.problem?.text ?? null;
  if (state.primary === null) return { url: state.upstream, connected: state.connected, heardAt: state.heardAt, problem };
  if (state.connected) return state.primary;
  return {
    url: state.primary.url,
    connected: false,
    heardAt: state.primary.heardAt,
    problem: `the relay above cannot follow its upstream ${state.upstream}${problem === null ? '' : ` (${problem})`}`,
  };
}

/** What the follower reports to the main thread (readiness, the log). */
export interface RelayStatus {
  /** The upstream's base URL. */
  upstream: string;
  /** Whether the copy holds a state of the upstream (a relay is not ready before it does). */
  holdsCopy: boolean;
  /** Whether a Follow stream to the upstream is open now and has said something. */
  connected: boolean;
  /** The upstream's revision this copy is at. */
  revision: number;
  /** When the upstream last said anything (Date.now()), a heartbeat included; null: not since this node started. */
  heardAt: number | null;
  /** Why the upstream cannot be followed now (for the operator's log and /ready); null while it is followed. */
  problem: { refused: boolean; text: string } | null;
  /** When the upstream is itself a relay: the primary as it last reported it; null when the upstream is the primary. */
  primary: PrimaryReport | null;
}
