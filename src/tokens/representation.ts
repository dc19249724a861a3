// The spec's token description (the answer of the token routes): one TypeBox value with its Static type
// of the same name, the OpenAPI document's schema and what tokenDescription returns.
import { Type, type Static } from '../typebox.js';
import type { Project } from '../model/projects.js';
import type { Token } from '../model/tokens.js';

const Id = (description: string) => Type.String({ description });

export const TokenDescription = Type.Object({
  id: Id('Token id'),
  name: Type.String(),
  project: Type.Object({ id: Type.String(), name: Type.String() }),
  permission: Type.Union([Type.Literal('read'), Type.Literal('write')]),
  environments: Type.Array(Type.String(), { description: 'Environments the token is limited to; [] means all' }),
  expiresAt: Type.Number({ description: 'Unix ms; 0 means never' }),
});
export type TokenDescription = Static<typeof TokenDescription>;

export function tokenDescription(token: Token, project: Project): TokenDescription {
  return {
    id: token.id,
    name: token.name,
    project: { id: project.id, name: project.name },
    permission: token.permission,
    environments: token.environments,
    expiresAt: token.expiresAt,
  };
}
