// One feature in Unleash's model (src/model/unleash-model.ts), compiled once per flag version, and evaluated as Unleash's
// SDKs evaluate it (the client specification 6.1; unleash-client 6.12's client.ts, strategies and
// variant.ts, whose behaviour this follows step by step, written anew):
//
//   isEnabled   every dependency met (below), and the feature enabled; no strategies: on for everyone;
//               else the first strategy whose constraints (its own, then its segments') are met and
//               that is on for the context; its variants, if it has any, pick the variant
//   getVariant  off: the "disabled" variant; on by a strategy with variants: that strategy's pick; else
//               the feature's variants' pick (overrides first); none: "disabled" (the feature on)
//   dependency  the parent exists and has no dependencies of its own; enabled (absent or true): the
//               parent is on, and when variants are listed its variant is one of them; enabled false:
//               the parent is off
//
// Percentages and weights hash as the SDKs do: normalized(id, groupId, n, seed) =
// murmur3_x86_32(utf8(groupId + ":" + id), seed) % n + 1, seed 0 for strategies and 86028157 for
// variants (UTF-8 as Unleash Edge and the other SDKs; the Node SDK hashes UTF-16 code units cut to a
// byte, which agrees for ASCII). Every part that depends only on the feature (sets, hash prefixes,
// weights, predicates) is made here; an evaluation allocates nothing unless it must roll at random.
import type { Address4 } from 'ip-address';
import { type BucketPrefix, bucketPrefix, keyHash } from '../../bytes/bucket-hash.js';
import { ipAddress } from './ip-address.js';
import { compileConstraints, type Predicate, type UnleashFields } from './constraints.js';
import type {
  UnleashConstraint,
  UnleashModel,
  UnleashPayload,
  UnleashStrategy,
  UnleashStrategyVariant,
  UnleashVariant,
} from '../../model/unleash-model.js';

export type { UnleashFields } from './constraints.js';

const kStrategySeed = 0;
const kVariantSeed = 86028157;

/** A variant a feature can answer; compiled once, so an answer can be looked up by it. */
export interface CompiledVariant {
  readonly name: string;
  readonly weight: number;
  readonly payload: UnleashPayload | undefined;
  /** Feature variants only: context field -> values that pick this variant before any weighing. */
  readonly overrides: readonly { readonly field: string; readonly values: ReadonlySet<string> }[] | null;
}

interface VariantTable {
  readonly variants: readonly CompiledVariant[];
  readonly total: number;
  /** 'default': userId, sessionId, remoteAddress, in that order; else a context field or property. */
  readonly stickiness: string;
  readonly prefix: BucketPrefix;
  readonly hasOverrides: boolean;
}

interface CompiledStrategy {
  readonly constraints: Predicate | null;
  readonly on: (ctx: UnleashFields) => boolean;
  readonly variants: VariantTable | null;
}

interface CompiledDependency {
  readonly feature: string;
  readonly enabled: boolean;
  readonly variants: ReadonlySet<string> | null;
}

/** A parent feature by name (the same project and environment), or undefined when there is none. */
export type FeatureLookup = (name: string) => CompiledFeature | undefined;

export interface CompiledFeature {
  readonly name: string;
  readonly enabled: boolean;
  readonly strategies: readonly CompiledStrategy[];
  readonly variants: VariantTable | null;
  readonly dependencies: readonly CompiledDependency[] | null;
  /** Every variant it can answer (strategies' and the feature's), in the model's order. */
  readonly allVariants: readonly CompiledVariant[];
  readonly parents: FeatureLookup;
}

/** A text of a parameter, as the SDKs read it (they are JSON strings in Unleash's model; numbers as text). */
function param(strategy: UnleashStrategy, name: string): string | undefined {
  const value = strategy.parameters?.[name];
  return value === undefined ? undefined : String(value);
}

/** `normalized(id, groupId, n, seed)` for a prefix made of groupId and seed. */
function normalized(prefix: BucketPrefix, id: string, n: number): number {
  return (keyHash(prefix, id) % n) + 1;
}

function randomRollout(): string {
  return `${Math.round(Math.random() * 10000) + 1}`;
}

function randomVariantSeed(): string {
  return String(Math.round(Math.random() * 100000));
}

/** The first non-empty of userId, sessionId (and remoteAddress for variants): Unleash's default stickiness. */
function defaultStickiness(ctx: UnleashFields, withAddress: boolean): string | undefined {
  const user = ctx.unleashField('userId');
  if (user !== undefined && user !== '') return user;
  const session = ctx.unleashField('sessionId');
  if (session !== undefined && session !== '') return session;
  if (!withAddress) return undefined;
  const address = ctx.unleashField('remoteAddress');
  return address !== undefined && address !== '' ? address : undefined;
}

function percentageOf(text: string | undefined): number {
  return Number(text);
}

function compileOn(strategy: UnleashStrategy): (ctx: UnleashFields) => boolean {
  switch (strategy.name) {
    case 'default':
      return () => true;
    case 'flexibleRollout': {
      const percentage = percentageOf(param(strategy, 'rollout'));
      const prefix = bucketPrefix(param(strategy, 'groupId') || '', kStrategySeed);
      const stickiness = param(strategy, 'stickiness') || 'default';
      if (!(percentage > 0)) return () => false;
      return (ctx) => {
        const id =
          stickiness === 'default'
            ? (defaultStickiness(ctx, false) ?? randomRollout())
            : stickiness === 'random'
              ? randomRollout()
              : ctx.unleashValue(stickiness);
        return id !== undefined && id !== '' && normalized(prefix, id, 100) <= percentage;
      };
    }
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId': {
      const percentage = percentageOf(param(strategy, 'percentage'));
      const prefix = bucketPrefix(param(strategy, 'groupId') || '', kStrategySeed);
      const field = strategy.name === 'gradualRolloutUserId' ? 'userId' : 'sessionId';
      if (!(percentage > 0)) return () => false;
      return (ctx) => {
        const id = ctx.unleashField(field);
        return id !== undefined && id !== '' && normalized(prefix, id, 100) <= percentage;
      };
    }
    case 'gradualRolloutRandom': {
      const percentage = percentageOf(param(strategy, 'percentage'));
      return () => percentage >= Math.floor(Math.random() * 100) + 1;
    }
    case 'userWithId': {
      const list = param(strategy, 'userIds');
      const ids = new Set(list ? list.split(/\s*,\s*/) : []);
      return (ctx) => {
        const user = ctx.unleashField('userId');
        return user !== undefined && ids.has(user);
      };
    }
    case 'remoteAddress': {
      const list = param(strategy, 'IPs');
      if (!list) return () => false;
      const ranges = list.split(/\s*,\s*/);
      const exact = new Set(ranges);
      const subnets = ranges.map(address4).filter((a): a is Address4 => a !== null);
      return (ctx) => {
        const address = ctx.unleashField('remoteAddress');
        if (address !== undefined && exact.has(address)) return true;
        if (subnets.length === 0) return false;
        const remote = address4(address ?? '');
        if (remote === null) return false;
        for (const subnet of subnets) if (remote.isInSubnet(subnet)) return true;
        return false;
      };
    }
    default:
      // A strategy the SDKs do not know is never on (they skip it with a warning).
      return () => false;
  }
}

/** An IPv4 address or range as the SDK's remoteAddress strategy reads it, or null where it throws. */
function address4(text: string): Address4 | null {
  try {
    return new (ipAddress().Address4)(text);
  } catch {
    return null;
  }
}

function compileVariant(variant: UnleashVariant | UnleashStrategyVariant): CompiledVariant {
  const overrides =
    'overrides' in variant && variant.overrides !== undefined && variant.overrides.length > 0
      ? variant.overrides.map((o) => ({ field: o.contextName, values: new Set(o.values) }))
      : null;
  return { name: variant.name, weight: variant.weight, payload: variant.payload, overrides };
}

function variantTable(variants: readonly CompiledVariant[], groupId: string, stickiness: string | undefined): VariantTable | null {
  if (variants.length === 0) return null;
  return {
    variants,
    total: variants.reduce((sum, v) => sum + v.weight, 0),
    stickiness: stickiness || 'default',
    prefix: bucketPrefix(groupId, kVariantSeed),
    hasOverrides: variants.some((v) => v.overrides !== null),
  };
}

/**
 * `model` as feature `name`, `enabled` in its environment. `segments` are the segments its strategies
 * may name (by id; the model's own, or a client API document's); `parents` finds the features it depends on.
 */
export function compileFeature(
  name: string,
  enabled: boolean,
  model: UnleashModel,
  parents: FeatureLookup,
  segments: ReadonlyMap<number, readonly UnleashConstraint[]> = segmentMap(model),
): CompiledFeature {
  const allVariants: CompiledVariant[] = [];
  const strategies = model.strategies.map((strategy): CompiledStrategy => {
    const constraints: (UnleashConstraint | null)[] = [...(strategy.constraints ?? [])];
    for (const id of strategy.segments ?? []) {
      const segment = segments.get(id);
      if (segment === undefined) constraints.push(null);
      else constraints.push(...segment);
    }
    const variants = (strategy.variants ?? []).map(compileVariant);
    allVariants.push(...variants);
    // The SDK hashes `${groupId}:` with groupId as it is, so a strategy without one hashes "undefined:".
    const groupId = strategy.parameters?.groupId;
    return {
      constraints: compileConstraints(constraints),
      on: compileOn(strategy),
      variants: variantTable(variants, `${groupId}`, strategy.variants?.[0]?.stickiness || param(strategy, 'stickiness')),
    };
  });
  const featureVariants = (model.variants ?? []).map(compileVariant);
  allVariants.push(...featureVariants);
  const dependencies = model.dependencies ?? [];
  return {
    name,
    enabled,
    strategies,
    variants: variantTable(featureVariants, name, featureVariants.length > 0 ? model.variants![0]!.stickiness : undefined),
    dependencies:
      dependencies.length === 0
        ? null
        : dependencies.map((d) => ({
            feature: d.feature,
            enabled: d.enabled !== false,
            variants: d.variants !== undefined && d.variants.length > 0 ? new Set(d.variants) : null,
          })),
    allVariants,
    parents,
  };
}

/** The model's own segments by id. */
export function segmentMap(model: UnleashModel): Map<number, readonly UnleashConstraint[]> {
  return new Map((model.segments ?? []).map((s) => [s.id, s.constraints]));
}

/**
 * An evaluation's answer: rewritten by every call of evaluateFeature (read it before the next), so an
 * evaluation allocates no result. `variant` is null for Unleash's "disabled" variant.
 */
export interface FeatureAnswer {
  enabled: boolean;
  variant: CompiledVariant | null;
}

const answered: FeatureAnswer = { enabled: false, variant: null };

function pickVariant(table: VariantTable, ctx: UnleashFields): CompiledVariant | null {
  if (table.total <= 0) return null;
  const variants = table.variants;
  if (table.hasOverrides) {
    for (const variant of variants) {
      const overrides = variant.overrides;
      if (overrides === null) continue;
      for (const o of overrides) {
        const value = ctx.unleashValue(o.field);
        if (value !== undefined && o.values.has(value)) return variant;
      }
    }
  }
  let seed: string | undefined;
  if (table.stickiness === 'default') seed = defaultStickiness(ctx, true);
  else {
    const value = ctx.unleashValue(table.stickiness);
    seed = value === '' ? undefined : value;
  }
  const target = normalized(table.prefix, seed ?? randomVariantSeed(), table.total);
  let counter = 0;
  for (const variant of variants) {
    if (variant.weight === 0) continue;
    counter += variant.weight;
    if (counter >= target) return variant;
  }
  return null;
}

function dependenciesMet(feature: CompiledFeature, ctx: UnleashFields, nowMs: number): boolean {
  const dependencies = feature.dependencies;
  if (dependencies === null) return true;
  for (const dependency of dependencies) {
    const parent = feature.parents(dependency.feature);
    if (parent === undefined || parent.dependencies !== null) return false;
    const parentOn = isOn(parent, ctx, nowMs);
    if (!dependency.enabled) {
      if (parentOn) return false;
      continue;
    }
    if (!parentOn) return false;
    if (dependency.variants !== null) {
      const variant = variantOf(parent, ctx);
      if (!dependency.variants.has(variant === null ? 'disabled' : variant.name)) return false;
    }
  }
  return true;
}

/** isEnabled; `strategyVariant` (answered.variant) is the deciding strategy's pick, null for none. */
function isOn(feature: CompiledFeature, ctx: UnleashFields, nowMs: number): boolean {
  // Set after the parents are asked: asking one rewrites it.
  const met = dependenciesMet(feature, ctx, nowMs);
  answered.variant = null;
  if (!met || !feature.enabled) return false;
  const strategies = feature.strategies;
  if (strategies.length === 0) return true;
  for (let i = 0; i < strategies.length; i++) {
    const strategy = strategies[i]!;
    if (strategy.constraints !== null && !strategy.constraints(ctx, nowMs)) continue;
    if (!strategy.on(ctx)) continue;
    answered.variant = strategy.variants === null ? null : pickVariant(strategy.variants, ctx);
    return true;
  }
  return false;
}

/** The variant of a feature known to be on, after isOn set the deciding strategy's pick. */
function variantOf(feature: CompiledFeature, ctx: UnleashFields): CompiledVariant | null {
  if (answered.variant !== null) return answered.variant;
  return feature.variants === null ? null : pickVariant(feature.variants, ctx);
}

/** Unleash's isEnabled and getVariant at once, into the shared answer (read it before the next call). */
export function evaluateFeature(feature: CompiledFeature, ctx: UnleashFields, nowMs: number): FeatureAnswer {
  const on = isOn(feature, ctx, nowMs);
  answered.enabled = on;
  answered.variant = on ? variantOf(feature, ctx) : null;
  return answered;
}
