// A change the approvals gate held as a change request (src/approvals/gate.ts) as the writer's caller
// receives it: not applied, a request stored instead, opened for it or edited with it (its author's
// pending request on the same records). The writer carries the request as the gate described it.

/** What the writer reads of the request that holds a change: the approvals' view of it (src/approvals/request-view.ts) is one. */
export interface HeldRequest {
  readonly id: string;
  readonly environments: readonly (string | null)[];
  readonly approvals: readonly unknown[];
  readonly required: number;
}

export class ChangeRequested extends Error {
  constructor(
    readonly request: HeldRequest,
    /** Whether the change edited its author's pending request rather than opening one. */
    readonly edited: boolean,
  ) {
    super(changeRequestedText(request, edited));
    this.name = 'ChangeRequested';
  }
}

/** What every surface says of a change held as a request: opened for it, or edited with it. */
export function changeRequestedText(request: HeldRequest, edited: boolean): string {
  const where = request.environments.map((env) => env ?? "the project's environment").join(' and ');
  const approvals = `${request.approvals.length} of ${request.required} approvals`;
  return edited
    ? `${where} needs approval: this change was not applied; it edited change request ${request.id}, which holds it with the change it held (${approvals})`
    : `${where} needs approval: this change was not applied; change request ${request.id} holds it (${approvals})`;
}
