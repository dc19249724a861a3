// Why a flag state gives what it gives, as data: what explain.ts finds and the web console's playground
// answers (src/web-console/api/answers.ts). Types only, importing nothing, so the browser's tsconfig can
// read them without the engine they describe.

/** An audience rule as the playground shows it. */
export interface RuleView {
  readonly attribute: string;
  readonly values: readonly string[];
}

/** Which of the rules of design §2 decided, with what it read. */
export type Why =
  /** The state applies an audience its organisation's plan no longer has (decision 1 of docs/decisions.md). */
  | { readonly by: 'plan'; readonly audienceId: string }
  | { readonly by: 'disabled' }
  | { readonly by: 'cohort'; readonly cohort: string }
  /**
   * An audience applies. Not matched: `unmatched` is the first rule the context does not meet (null
   * when the audience no longer exists, which never matches). Matched: the percentage is 0 or 100.
   */
  | {
      readonly by: 'audience';
      readonly audienceId: string;
      readonly matched: boolean;
      readonly unmatched: RuleView | null;
      readonly percentage: number;
    }
  /** No audience, and 0% or 100%: the same for everyone not in a listed cohort. */
  | { readonly by: 'static'; readonly percentage: number }
  /** The sticky bucket of `key` (the targetingKey, else the cohort) against the percentage. */
  | {
      readonly by: 'split';
      readonly key: string;
      readonly keyFrom: 'targetingKey' | 'cohort';
      readonly bucket: number;
      readonly percentage: number;
    }
  /** A split without a key: the Evaluation API rolls afresh on each request; `roll` is this one's. */
  | { readonly by: 'roll'; readonly roll: number; readonly percentage: number }
  /** The state is in Unleash's model (design §2d): its strategies decided; `variant` is Unleash's variant name. */
  | { readonly by: 'unleash'; readonly variant: string };
