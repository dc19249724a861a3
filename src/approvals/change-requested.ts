// A change the approvals gate held as a change request (gate.ts) as its caller receives it: not applied,
// a request stored instead, opened for it or edited with it (its author's pending request on the same
// records). Each surface answers it as such: the Management API and the web console 202 with
// {changeRequest, edited}, the command line exit status 3.
import { Type, type Static } from '../typebox.js';
import { json } from '../routes/openapi-parts.js';
import { ChangeRequestView } from './request-view.js';

export class ChangeRequested extends Error {
  constructor(
    readonly request: ChangeRequestView,
    /** Whether the change edited its author's pending request rather than opening one. */
    readonly edited: boolean,
  ) {
    super(changeRequestedText(request, edited));
    this.name = 'ChangeRequested';
  }
}

/** The Management API's and the web console's 202 body: the request, whether it was edited, and what happened in a sentence. */
export const ChangeRequestedBody = Type.Object(
  {
    changeRequest: ChangeRequestView,
    edited: Type.Boolean({
      description: "true: the change edited its author's pending change request on the same records; false: it opened one",
    }),
    detail: Type.String(),
  },
  { description: 'The change was not applied: a change request holds it until it is approved (docs/approvals.md)' },
);
export type ChangeRequestedBody = Static<typeof ChangeRequestedBody>;

export function changeRequestedBody(err: ChangeRequested): ChangeRequestedBody {
  return { changeRequest: err.request, edited: err.edited, detail: err.message };
}

/** What every surface says of a change held as a request: opened for it, or edited with it. */
export function changeRequestedText(request: ChangeRequestView, edited: boolean): string {
  const where = request.environments.map((env) => env ?? "the project's environment").join(' and ');
  const approvals = `${request.approvals.length} of ${request.required} approvals`;
  return edited
    ? `${where} needs approval: this change was not applied; it edited change request ${request.id}, which holds it with the change it held (${approvals})`
    : `${where} needs approval: this change was not applied; change request ${request.id} holds it (${approvals})`;
}

/**
 * The documented answer of a write that an approval policy held as a change request (docs/approvals.md):
 * nothing applied; the request holds it until it is approved.
 */
export const changeRequested = () => ({
  '202': json(
    ChangeRequestedBody,
    'Not applied: the environment it changes is guarded, and a change request now holds the change (docs/approvals.md)',
  ),
});
