// Unleash's context read from Flagwire's flat contexts (the Evaluation API's query, OFREP's `context`), for
// a state in Unleash's model (src/unleash/rules/state.ts): the mapping docs/api.md (Unleash's model) tells users.
//
//   Unleash's context    read from
//   userId               the attribute userId, else the targeting key (as Unleash's OpenFeature providers map it)
//   environment          the attribute environment, else the request's environment (env)
//   cohort               the cohort (as the client API's model of Flagwire's flags reads properties.cohort)
//   any other name       the attribute of that name (sessionId, remoteAddress, appName, currentTime and
//                        every property alike: a flat context has no separate properties)
//
// Unleash's front-end API reads Unleash's own context, fields and properties apart (src/unleash/context.ts).
import type { UnleashFields } from './constraints.js';

/** A flat context (the engine's EvalContext, OFREP's context): its attributes, targeting key, cohort and environment. */
interface FlatContext {
  /** The attribute's value, or undefined when the context does not carry it. */
  attribute(name: string): string | undefined;
  readonly targetingKey: string | null;
  readonly cohort: string | null;
  readonly env: string | null;
}

export class FlatUnleashFields implements UnleashFields {
  constructor(private readonly ctx: FlatContext) {}

  unleashField(name: string): string | undefined {
    const ctx = this.ctx;
    const value = ctx.attribute(name);
    if (value !== undefined) return value;
    if (name === 'userId') return ctx.targetingKey ?? undefined;
    if (name === 'environment') return ctx.env ?? undefined;
    if (name === 'cohort') return ctx.cohort ?? undefined;
    return undefined;
  }

  unleashValue(name: string): string | undefined {
    return this.unleashField(name);
  }
}
