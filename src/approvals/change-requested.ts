// How the surfaces answer a change the approvals gate held as a change request (the writer's
// ChangeRequested, src/writer/change-requested.ts): the Management API and the web console 202 with
// {changeRequest, edited}; the command line exits with status 3.
import { Type, type Static } from '../typebox.js';
import type { ChangeRequested } from '../writer/change-requested.js';
import { ChangeRequestView } from './request-view.js';

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
  // The gate holds a change with its request's view (request-view.ts), which the writer carries as it is.
  return { changeRequest: err.request as ChangeRequestView, edited: err.edited, detail: err.message };
}
