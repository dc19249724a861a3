// A change the approvals gate held as a change request (gate.ts) as its caller receives it: not applied,
// a request stored instead. Each surface answers it as such: the Management API and the web console
// 202 with {changeRequest}, the command line exit status 3.
import { Type, type Static } from '../typebox.js';
import { ChangeRequestView } from './request-view.js';

export class ChangeRequested extends Error {
  constructor(readonly request: ChangeRequestView) {
    super(changeRequestedText(request));
    this.name = 'ChangeRequested';
  }
}

/** The Management API's and the web console's 202 body: the request, and what happened in a sentence. */
export const ChangeRequestedBody = Type.Object(
  { changeRequest: ChangeRequestView, detail: Type.String() },
  { description: 'The change was not applied: a change request holds it until it is approved (docs/approvals.md)' },
);
export type ChangeRequestedBody = Static<typeof ChangeRequestedBody>;

export function changeRequestedBody(err: ChangeRequested): ChangeRequestedBody {
  return { changeRequest: err.request, detail: err.message };
}

/** What every surface says of a change held as a request. */
export function changeRequestedText(request: ChangeRequestView): string {
  const where = request.environments.map((env) => env ?? "the project's environment").join(' and ');
  return `${where} needs approval: this change was not applied; change request ${request.id} holds it (${request.approvals.length} of ${request.required} approvals)`;
}
