// What GET /api/v1/flags/{flag_id}/flagd and the console's flag page say of a flag in each flag set
// (flagd-serving.ts decides it): apart, so that the console's browser code can name the shape without
// reading what decides it (the store's fragments included).
import { type Static, Type } from '../typebox.js';

export const FlagdServing = Type.Object({
  environment: Type.Union([Type.String(), Type.Null()], {
    description: "The environment's flag set; null for a single-environment project's one set",
  }),
  served: Type.Boolean({ description: 'Whether the flag is in that flag set, answering exactly as OFREP does' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is left out; null when served' }),
});
export type FlagdServing = Static<typeof FlagdServing>;

export const FlagdServingAnswer = Type.Object({
  id: Type.String(),
  name: Type.String(),
  flagd: Type.Array(FlagdServing, { description: "One entry per flag set of the flag's project" }),
});
export type FlagdServingAnswer = Static<typeof FlagdServingAnswer>;
