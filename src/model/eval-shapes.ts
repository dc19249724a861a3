// The Evaluation API's 200 shapes, as TypeBox values: the answer bodies are built from them
// (src/eval/bodies.ts) and the OpenAPI document declares them (src/routes/route-table.ts).
import { Type, type Static } from '@sinclair/typebox';

export const EvalFlag = Type.Object({ id: Type.String(), name: Type.String(), enabled: Type.Boolean() });
export type EvalFlag = Static<typeof EvalFlag>;
export const EvalFlagList = Type.Array(EvalFlag, { description: 'Every flag of the project, in creation order' });
export type EvalFlagList = Static<typeof EvalFlagList>;
