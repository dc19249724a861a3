// The side thread's jobs by name (side-thread.ts): each reads the store, changes nothing, and answers
// with a value that crosses to the front end by a structured clone.
import { planJob } from '../flags-as-code/apply-commands.js';
import { prepareFragmentPut } from '../fragments/fragment-prepare.js';
import type { StoreReader } from '../store/interfaces.js';

export const kSideJobs = {
  /** A flag file's plan (POST /api/v1/plan). */
  plan: planJob,
  /** A fragment's new rule checked before its change goes to the writer. */
  fragmentPut: prepareFragmentPut,
} satisfies Record<string, (r: StoreReader, input: never) => unknown>;

export type SideJobName = keyof typeof kSideJobs;
export type SideJobInput<J extends SideJobName> = Parameters<(typeof kSideJobs)[J]>[1];
export type SideJobOutput<J extends SideJobName> = ReturnType<(typeof kSideJobs)[J]>;
