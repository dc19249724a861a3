// A snapshot (src/model/snapshot-shape.ts) compiled for in-process evaluation with the engine's own functions,
// as the server's engine compiles a flag version (src/evaluation/engine/engine.ts compileFlag): compileStateWith with the
// flag's bucketing and its audience, compileVariants with the flag's name as flagd's flag key.
import type { ResolutionDetails } from '@openfeature/server-sdk';
import { compileStateWith } from '../evaluation/engine/evaluate.js';
import { compileVariants, unleashVariants } from '../evaluation/engine/variants.js';
import type { OfrepState } from '../ofrep/answer.js';
import type { Audience } from '../model/projects.js';
import type { Snapshot, SnapshotFlag } from '../model/snapshot-shape.js';
import type { FeatureLookup } from '../unleash/rules/feature.js';
import { compileUnleash } from '../unleash/rules/state.js';

export interface ProviderFlag {
  readonly id: string;
  readonly name: string;
  readonly state: OfrepState;
  /** `{id, name}`: every answer's flag metadata (OFREP's `metadata`), made once. */
  readonly metadata: Readonly<{ id: string; name: string }>;
  /**
   * A boolean state's answers by decision (reason << 1 | value), built on first use: the SDK copies an
   * answer, so one object per decision serves every evaluation (a static flag allocates nothing).
   */
  readonly decided: ResolutionDetails<boolean>[];
}

export interface CompiledSnapshot {
  readonly projectId: string;
  /** null: a single-environment project. */
  readonly environment: string | null;
  readonly revision: number;
  readonly audiencesAllowed: boolean;
  /** When audiences stop being allowed (a trial's end, Unix ms); Infinity: never by the clock alone. */
  readonly audiencesUntil: number;
  /** Every flag by id and by name (OFREP's keys); an id wins over a name that spells it. */
  readonly byKey: ReadonlyMap<string, ProviderFlag>;
  /** Per flag id, what decides its answers (its record and its audience's), to tell which flags a change touched. */
  readonly fingerprints: ReadonlyMap<string, string>;
}

export function compileSnapshot(snapshot: Snapshot): CompiledSnapshot {
  // The records the engine compiles from: the snapshot's audiences are its project's.
  const audiences = new Map<string, Audience>(snapshot.audiences.map((a) => [a.id, { ...a, projectId: snapshot.projectId }]));
  const byKey = new Map<string, ProviderFlag>();
  const fingerprints = new Map<string, string>();
  // A state in Unleash's model reads its parents by name from the same snapshot, when it is evaluated.
  const parents = (name: string) => byName.get(name)?.state.unleash?.feature;
  const byName = new Map<string, ProviderFlag>();
  for (const flag of snapshot.flags) byName.set(flag.name, compileFlag(flag, audiences, parents));
  for (const [name, flag] of byName) byKey.set(name, flag);
  for (const flag of snapshot.flags) {
    byKey.set(flag.id, byKey.get(flag.name)!);
    fingerprints.set(flag.id, fingerprint(flag, audiences, snapshot.audiencesAllowed));
  }
  return {
    projectId: snapshot.projectId,
    environment: snapshot.environment,
    revision: snapshot.revision,
    audiencesAllowed: snapshot.audiencesAllowed,
    audiencesUntil: snapshot.audiencesUntil ?? Number.POSITIVE_INFINITY,
    byKey,
    fingerprints,
  };
}

function compileFlag(flag: SnapshotFlag, audiences: ReadonlyMap<string, Audience>, parents: FeatureLookup): ProviderFlag {
  const { state } = flag;
  const audience = state.audienceId === null ? undefined : audiences.get(state.audienceId);
  const variants = state.typed === undefined ? null : compileVariants(state.typed, flag.name, null, state.experiment ?? null);
  return {
    id: flag.id,
    name: flag.name,
    state:
      state.unleash === undefined ? compileStateWith(flag.id, state, audience, flag.bucketing, { variants }) : unleashState(flag, parents),
    metadata: Object.freeze({ id: flag.id, name: flag.name }),
    decided: [],
  };
}

/** A state in Unleash's model, as the engine compiles one: its percentage, audience and cohorts not read. */
function unleashState(flag: SnapshotFlag, parents: FeatureLookup): OfrepState {
  const { state } = flag;
  const unleash = compileUnleash(flag.name, state.enabled, state.unleash!, parents);
  // `unleash` is compileState's own field, set in place: the state keeps every state's one hidden class.
  return compileStateWith(flag.id, { ...state, audienceId: null, cohorts: [] }, undefined, flag.bucketing, {
    unleash,
    variants: unleashVariants(unleash),
  });
}

function fingerprint(flag: SnapshotFlag, audiences: ReadonlyMap<string, Audience>, audiencesAllowed: boolean): string {
  const audienceId = flag.state.audienceId;
  if (audienceId === null) return JSON.stringify(flag);
  return JSON.stringify([flag, audiences.get(audienceId) ?? null, audiencesAllowed]);
}

/** The keys (ids and names) of the flags that differ between two snapshots: added, removed or changed. */
export function changedFlags(before: CompiledSnapshot, after: CompiledSnapshot): string[] {
  const changed = new Set<string>();
  const note = (id: string, snapshot: CompiledSnapshot) => {
    changed.add(id);
    changed.add(snapshot.byKey.get(id)!.name);
  };
  for (const [id, print] of after.fingerprints) if (before.fingerprints.get(id) !== print) note(id, after);
  for (const id of before.fingerprints.keys()) if (!after.fingerprints.has(id)) note(id, before);
  // A renamed flag: its old name no longer answers.
  for (const [id, print] of before.fingerprints) if (after.fingerprints.get(id) !== print) note(id, before);
  return [...changed];
}
