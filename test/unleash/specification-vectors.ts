// Unleash's client specification (@unleash/client-specification 6.1.0, Apache-2.0, the npm package's own
// files, read where npm installed them): every specification file its index names, each folded into one
// state (the delta files' events applied in order), and each feature of that state in Flagwire's rule
// type (src/model/unleash-model.ts): its strategies, variants and dependencies, with the segments they name.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { UnleashModel, UnleashSegment } from '../../src/model/unleash-model.js';

/** A context as a test vector gives it: Unleash's fields, and `properties`. */
export interface VectorContext {
  [field: string]: unknown;
  properties?: Record<string, unknown>;
}

export interface VectorVariant {
  name: string;
  enabled: boolean;
  feature_enabled?: boolean;
  payload?: { type: string; value: string };
}

export interface VectorCase<E> {
  description: string;
  context: VectorContext;
  toggleName: string;
  expectedResult: E;
}

export interface VectorFeature {
  name: string;
  enabled: boolean;
  model: UnleashModel;
}

export interface Specification {
  file: string;
  features: VectorFeature[];
  tests: VectorCase<boolean>[];
  variantTests: VectorCase<VectorVariant>[];
}

interface RawFeature {
  name: string;
  enabled: boolean;
  strategies?: UnleashModel['strategies'] | null;
  variants?: UnleashModel['variants'] | null;
  dependencies?: UnleashModel['dependencies'] | null;
}

interface RawEvent {
  type: string;
  features?: RawFeature[];
  segments?: UnleashSegment[];
  feature?: RawFeature;
  featureName?: string;
  segment?: UnleashSegment;
  segmentId?: number;
}

interface RawSpecification {
  state: { features?: RawFeature[]; segments?: UnleashSegment[]; events?: RawEvent[] };
  tests?: VectorCase<boolean>[];
  variantTests?: VectorCase<VectorVariant>[];
}

const require = createRequire(import.meta.url);
export const kSpecificationDir = join(dirname(require.resolve('@unleash/client-specification/package.json')), 'specifications');
export const kSpecificationVersion: string = (
  JSON.parse(readFileSync(join(kSpecificationDir, '..', 'package.json'), 'utf8')) as { version: string }
).version;

function fold(state: RawSpecification['state']): { features: Map<string, RawFeature>; segments: Map<number, UnleashSegment> } {
  const features = new Map<string, RawFeature>();
  const segments = new Map<number, UnleashSegment>();
  for (const f of state.features ?? []) features.set(f.name, f);
  for (const s of state.segments ?? []) segments.set(s.id, s);
  for (const event of state.events ?? []) {
    if (event.type === 'hydration') {
      features.clear();
      segments.clear();
      for (const f of event.features ?? []) features.set(f.name, f);
      for (const s of event.segments ?? []) segments.set(s.id, s);
    } else if (event.type === 'feature-updated') features.set(event.feature!.name, event.feature!);
    else if (event.type === 'feature-removed') features.delete(event.featureName!);
    else if (event.type === 'segment-updated') segments.set(event.segment!.id, event.segment!);
    else if (event.type === 'segment-removed') segments.delete(event.segmentId!);
    else throw new Error(`an event of a type this reader does not know: ${event.type}`);
  }
  return { features, segments };
}

/** The feature as Flagwire's rule type: the keys the model has, the segments its strategies name. */
function toModel(raw: RawFeature, segments: ReadonlyMap<number, UnleashSegment>): UnleashModel {
  const strategies = (raw.strategies ?? []).map((s) => {
    const strategy: UnleashModel['strategies'][number] = { name: s.name };
    if (s.parameters != null) strategy.parameters = s.parameters;
    if (s.constraints != null) strategy.constraints = s.constraints;
    if (s.segments != null) strategy.segments = s.segments;
    if (s.variants != null) strategy.variants = s.variants;
    return strategy;
  });
  const named = new Set(strategies.flatMap((s) => s.segments ?? []));
  const model: UnleashModel = { strategies };
  if (raw.variants != null) model.variants = raw.variants;
  if (raw.dependencies != null) model.dependencies = raw.dependencies;
  const own = [...named].filter((id) => segments.has(id)).map((id) => segments.get(id)!);
  if (own.length > 0) model.segments = own;
  return model;
}

export function loadSpecifications(): Specification[] {
  const index = JSON.parse(readFileSync(join(kSpecificationDir, 'index.json'), 'utf8')) as string[];
  return index.map((file) => {
    const raw = JSON.parse(readFileSync(join(kSpecificationDir, file), 'utf8')) as RawSpecification;
    const { features, segments } = fold(raw.state);
    return {
      file,
      features: [...features.values()].map((f) => ({ name: f.name, enabled: f.enabled, model: toModel(f, segments) })),
      tests: raw.tests ?? [],
      variantTests: raw.variantTests ?? [],
    };
  });
}
