// What the console's playground answers (console-routes.ts), as the browser reads it: types only, of
// modules that declare nothing of Node's (the browser's tsconfig checks it through
// src/web-console/api/answers.ts, which hands them on).
import type { VariantValue } from '../targeting/definition.js';
import type { Why } from './engine/why.js';

/** One flag's answer: the Evaluation API's fields, OFREP's reason, and why in words and as data. */
export interface PlaygroundResult {
  id: string;
  name: string;
  /** GET /v1/flags/{id}'s `enabled`; null where it answers 403 (the plan has no audiences). */
  enabled: boolean | null;
  /** A boolean state's `enabled`; a typed state's variant value; absent where the caller's default applies. */
  value?: VariantValue;
  variant?: string;
  /** OFREP's reason, or ERROR where OFREP answers an error (`errorCode`). */
  reason: string;
  errorCode?: string;
  why: Why;
  /** `why` in words, audiences by name. */
  because: string;
}

/** POST projects/:projectId/playground. */
export interface PlaygroundView {
  /** The context as the Evaluation API's query string: GET /v1/flags/{id}?<query> gives each result's `enabled`. */
  query: string;
  env: string | null;
  results: PlaygroundResult[];
}
