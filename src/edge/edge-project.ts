// A snapshot compiled for the edge's answers (src/provider/compile.ts, the provider's own compilation),
// with what the OFREP routes need beside it: the flags in creation order, whether a rule reads the clock,
// and each flag's answers as text, kept with the compiled snapshot as the server keeps its bytes with a
// flag version (src/ofrep/evaluate.ts).
import { compileSnapshot, type CompiledSnapshot, type ProviderFlag } from '../provider/compile.js';
import { contextFreeAnswer } from '../ofrep/answer.js';
import type { Snapshot } from '../model/snapshot-shape.js';
import type { Resolution } from '../targeting/compiled-flag.js';

/** One flag's answers as OFREP text, built on first use. */
export interface EdgeFlag {
  readonly flag: ProviderFlag;
  /** What the flag answers whatever the context, by whether audiences are allowed (1) or not (0); null: the context decides. */
  readonly settled: readonly [number | Resolution | null, number | Resolution | null];
  /** Decision and failure slots' texts, by id (0..kSlots-1) then by name (kSlots..). */
  readonly slotTexts: (string | undefined)[];
  /** A variant answer's texts by id and by name. */
  readonly variantTexts: readonly [Map<Resolution, string>, Map<Resolution, string>];
}

export interface EdgeProject {
  readonly compiled: CompiledSnapshot;
  /** The project's configuration tag (Flagwire-Config-Tag): the OFREP bulk ETags' head. */
  readonly configTag: string;
  readonly flags: readonly EdgeFlag[];
  /** Every flag by id (the single-flag route without X-Flagwire-Project finds ids only). */
  readonly byId: ReadonlyMap<string, EdgeFlag>;
  readonly byName: ReadonlyMap<string, EdgeFlag>;
  /** Whether a rule may read `$flagd.timestamp`: the bulk ETag is then of the answer's bytes. */
  readonly readsClock: boolean;
}

/**
 * Where a FlagwireEdge keeps its compiled snapshot for the OpenFeature provider (provider.ts): a registered
 * symbol, the same in the package's two bundles (index.js and provider.js each carry this module), and
 * absent from its declarations, which name nothing but the options.
 */
const kHeld = Symbol.for('flagwire.edge.project');

export function holdProject(edge: object, project: EdgeProject): void {
  (edge as { [kHeld]?: EdgeProject })[kHeld] = project;
}

/** The compiled snapshot `edge` holds; null before its first. */
export function heldProject(edge: object): EdgeProject | null {
  return (edge as { [kHeld]?: EdgeProject })[kHeld] ?? null;
}

export function compileEdgeProject(snapshot: Snapshot, configTag: string): EdgeProject {
  const compiled = compileSnapshot(snapshot);
  const flags: EdgeFlag[] = [];
  const byId = new Map<string, EdgeFlag>();
  const byName = new Map<string, EdgeFlag>();
  let readsClock = false;
  for (const { id } of snapshot.flags) {
    const flag = compiled.byKey.get(id)!;
    const state = flag.state;
    if (state.variants?.readsClock) readsClock = true;
    const edge: EdgeFlag = {
      flag,
      settled: [contextFreeAnswer(state, false), contextFreeAnswer(state, true)],
      slotTexts: [],
      variantTexts: [new Map(), new Map()],
    };
    flags.push(edge);
    byId.set(flag.id, edge);
    byName.set(flag.name, edge);
  }
  return { compiled, configTag, flags, byId, byName, readsClock };
}
