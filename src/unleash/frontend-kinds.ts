// What each of Unleash's front-end API routes answers, the table both threads share (hosted-routes.ts
// lists its route numbers in this order; frontend-evaluator.ts reads it), in a module of its own so an
// eval worker loads none of the main thread's route code.

/** The enabled toggles, every toggle, one toggle, or an accepted report (the SDK's metrics, its registration). */
export const kFrontendKinds = ['enabled', 'all', 'feature', 'metrics', 'register'] as const;
export type FrontendKind = (typeof kFrontendKinds)[number];
