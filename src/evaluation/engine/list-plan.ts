// A project's list answer (the Evaluation API's project route, OFREP's bulk evaluation, Unleash's
// front-end toggles) as written for every context: many flags answer every context alike (a kill switch turned off, a rollout finished at 100%),
// so their entries are kept with the compiled project as runs, one Buffer each with the commas between
// its entries, and a request decides only the flags between the runs. A route set says, per flag, what
// its entry is for every context (contextFreeDecision and the route's own rules), and writes the list by
// walking the plan: a run is copied, an index is decided. A list whose entries are all settled costs a
// few copies however many flags it has (bench/RESULTS.md, ofrep-bulk-cpu.bench).
import type { ResultWriter } from './protocol.js';

/** Runs of entries (Buffers) and the indexes of the flags decided per request, in the list's order. */
export type ListPlan = readonly (Buffer | number)[];

const kComma = 0x2c;
const kCommaBytes = Buffer.from(',');

/**
 * The plan of a list of `count` flags. `entry(i)`: flag i's entry for every context, null where a
 * request must decide it, undefined where no context lists it.
 */
export function listPlan(count: number, entry: (i: number) => Buffer | null | undefined): ListPlan {
  const parts: (Buffer | number)[] = [];
  let run: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = entry(i);
    if (bytes === undefined) continue;
    if (bytes === null) {
      if (run.length > 0) parts.push(Buffer.concat(run));
      run = [];
      parts.push(i);
      continue;
    }
    if (run.length > 0) run.push(kCommaBytes);
    run.push(bytes);
  }
  if (run.length > 0) parts.push(Buffer.concat(run));
  return parts;
}

/**
 * A route set's plans, kept per compiled project (the engine's ProjectEntry: dropped with it when the store
 * moves), by the route set's variant of the list (`kind`: a small number, such as whether the plan allows
 * audiences) and the environment (one of the project's: projectEnv), so a project keeps a few plans per
 * environment. `build` makes one the first time it is asked for (given once: no closure per request).
 */
export class ListPlans<Project extends object> {
  private readonly plans = new WeakMap<Project, Map<string, ListPlan>[]>();

  constructor(
    private readonly kinds: number,
    private readonly build: (project: Project, kind: number, env: string | null) => ListPlan,
  ) {}

  of(project: Project, kind: number, env: string | null): ListPlan {
    let byKind = this.plans.get(project);
    if (byKind === undefined) {
      byKind = Array.from({ length: this.kinds }, () => new Map<string, ListPlan>());
      this.plans.set(project, byKind);
    }
    const byEnv = byKind[kind]!;
    const key = env ?? '';
    let plan = byEnv.get(key);
    if (plan === undefined) {
      plan = this.build(project, kind, env);
      byEnv.set(key, plan);
    }
    return plan;
  }
}

/** A route set's entry for a flag its plan leaves to the request: its bytes, or null where it lists nothing. */
export interface DecidedEntries {
  decided(index: number): Uint8Array | null;
}

/**
 * Writes `plan`'s list after the route set's opening bytes: each run as it is, each index as `entries`
 * decides it now, with the commas between what is written. One object asked per request, no closure.
 */
export function writeList(out: ResultWriter, plan: ListPlan, entries: DecidedEntries): void {
  let first = true;
  for (let p = 0; p < plan.length; p++) {
    const part = plan[p]!;
    const bytes = typeof part === 'number' ? entries.decided(part) : part;
    if (bytes === null) continue;
    if (!first) out.pushByte(kComma);
    first = false;
    out.push(bytes);
  }
}
