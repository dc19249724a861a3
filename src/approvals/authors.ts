// Who a change request counts as made by (docs/approvals.md, "Who is an author"): its author and
// co-authors, and for a token's change the person who created the token and whoever rotated it (they
// hold its secret). Every rule about authors reads it here: an author may not approve (unless the policy
// allows it), an author's change to records of the request edits it, and an author withdraws it. The ids
// an author counts as are read off the record alone (records.ts identitiesOf), which the store's index of
// pending requests by author keys on too.
import type { StoreReader } from '../store/interfaces.js';
import { type ChangeRequest, identitiesOf, type RequestActor, type RequestAuthor, requestIdentities } from './records.js';
import { getToken } from '../model/records/token-records.js';
import { getUser } from '../model/records/org-records.js';

/** A user as a request names them (an unknown user's id stands for their name, as the audit has it). */
function personOf(r: StoreReader, userId: string): RequestActor {
  return { id: `user:${userId}`, name: getUser(r, userId)?.name ?? userId };
}

/** The author an audit actor is: a token with the people its changes count as made by; anyone else as is. */
export function asAuthor(r: StoreReader, actor: RequestActor): RequestAuthor {
  const token = actor.id.startsWith('token:') ? getToken(r, actor.id.slice('token:'.length)) : undefined;
  if (token === undefined) return { id: actor.id, name: actor.name };
  return {
    id: actor.id,
    name: actor.name,
    createdBy: personOf(r, token.createdBy),
    ...(token.rotatedBy === undefined ? {} : { rotatedBy: personOf(r, token.rotatedBy) }),
  };
}

/** Whether `author` counts as an author of `request`: they share a person (or are the same token). */
export function isAuthorOf(request: ChangeRequest, author: RequestAuthor): boolean {
  const ids = requestIdentities(request);
  return identitiesOf(author).some((id) => ids.has(id));
}

/** The request with `editor` among its authors, when they add anyone to them. */
export function withCoAuthor(request: ChangeRequest, editor: RequestAuthor): ChangeRequest {
  const ids = requestIdentities(request);
  if (identitiesOf(editor).every((id) => ids.has(id))) return request;
  return { ...request, coAuthors: [...(request.coAuthors ?? []), editor] };
}

/** An author in words: `Alice`, `token deploy, created by Alice, rotated by Bob`. */
function describeAuthor(author: RequestAuthor): string {
  if (author.createdBy === undefined) return author.name;
  const rotated = author.rotatedBy === undefined ? '' : `, rotated by ${author.rotatedBy.name}`;
  return `token ${author.name}, created by ${author.createdBy.name}${rotated}`;
}

/** Every author of a request in words, the author first: what every surface shows. */
export function describeAuthors(request: ChangeRequest): string {
  return [request.author, ...(request.coAuthors ?? [])].map(describeAuthor).join('; ');
}
