// A Flagwire flag as the OpenFeature CLI's manifest says it, and a manifest write as the typed variants a
// flag's create or patch takes (docs/openfeature-cli.md: what the manifest says of a flag, and what it cannot).
import { FlagwireError } from '../errors.js';
import { envEntry, kDefaultEnvState } from '../flags/records/flag-state.js';
import type { Flag, FlagState, TypedVariants } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import type { VariantValue } from '../targeting/definition.js';
import type { ManifestFlag, ManifestType } from './schemas.js';

/** The variant a manifest write adds when the flag has none with its default value. */
const kDefaultVariant = 'default';

/**
 * The state the manifest reads a flag from: a single flag's own; a group flag's in the first of
 * `environments` (in order) in which it has variants, or the first of them (a flag's environments may
 * disagree: the manifest has one default value, docs/openfeature-cli.md).
 */
function readState(flag: Flag, environments: readonly string[]): FlagState {
  if (flag.kind === 'flag') return flag.state;
  const states = environments.map((e) => envEntry(flag, e));
  return states.find((s) => s.typed !== undefined) ?? states[0] ?? kDefaultEnvState;
}

/** The manifest type of a state's variants: boolean without variants; a number type integer when every value is one. */
function typeOf(typed: TypedVariants | undefined): ManifestType {
  if (typed === undefined) return 'boolean';
  const values = Object.values(typed.variants);
  const first = values[0];
  if (typeof first === 'boolean') return 'boolean';
  if (typeof first === 'string') return 'string';
  if (typeof first === 'number') return values.every((v) => Number.isInteger(v)) ? 'integer' : 'float';
  return 'object';
}

/** What a type answers where no variant is the default (the caller's own default is served there). */
function zeroOf(type: ManifestType): VariantValue {
  switch (type) {
    case 'boolean':
      return false;
    case 'string':
      return '';
    case 'integer':
    case 'float':
      return 0;
    case 'object':
      return {};
  }
}

/** `flag` as the manifest says it, a group flag read from `environments` (readState). */
export function manifestFlag(flag: Flag, environments: readonly string[]): ManifestFlag {
  const { typed } = readState(flag, environments);
  const type = typeOf(typed);
  const chosen = typed?.defaultVariant ?? null;
  const defaultValue = typed !== undefined && chosen !== null ? typed.variants[chosen]! : zeroOf(type);
  return { key: flag.name, name: flag.name, type, description: flag.description, defaultValue };
}

/** The manifest's answer of one flag: as it is stored now, and when it last changed. */
export function manifestFlagAnswer(flag: Flag, project: Project) {
  return { flag: manifestFlag(flag, project.environments), updatedAt: new Date(flag.updatedAt).toISOString() };
}

/** Whether `value` is of the manifest `type`. */
function isOfType(value: unknown, type: ManifestType): boolean {
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'float':
      return typeof value === 'number';
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

/** The problem of a default value not of its type, or null. */
export function defaultValueProblem(value: unknown, type: ManifestType): string | null {
  return isOfType(value, type) ? null : `defaultValue must be ${type === 'integer' ? 'an integer' : `of type ${type}`}, as type says`;
}

/** The kind of value variants hold: integer and float are one kind (numbers), which the manifest may move between. */
function kindOf(type: ManifestType): string {
  return type === 'integer' || type === 'float' ? 'number' : type;
}

/**
 * The typed fields of a new flag whose default is `value`: none for `false` (Flagwire's own boolean flag,
 * which answers false while off), `on`/`off` for `true`, else one variant holding the value.
 */
export function createdVariants(
  type: ManifestType,
  value: VariantValue,
): { variants?: Record<string, VariantValue>; defaultVariant?: string } {
  if (type === 'boolean') return value === false ? {} : { variants: { on: true, off: false }, defaultVariant: 'on' };
  return { variants: { [kDefaultVariant]: value }, defaultVariant: kDefaultVariant };
}

/**
 * The patch of one state that makes `value` its default: the variant already holding it chosen, or one
 * added beside the others (whose targeting keeps naming them); empty when nothing changes. A type of
 * another kind than the flag's is refused: its variants and the rules naming them would be lost.
 */
export function defaultPatch(
  flagName: string,
  current: TypedVariants | undefined,
  flagType: ManifestType,
  type: ManifestType,
  value: VariantValue | undefined,
): { variants?: Record<string, VariantValue>; defaultVariant?: string } {
  if (kindOf(type) !== kindOf(flagType)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `flag "${flagName}" is of type ${flagType}; the manifest API does not change a flag's type (its variants and rules would be lost): create a flag under another key, or change its variants with PATCH /api/v1/flags/{id}`,
    );
  }
  if (value === undefined) return {};
  if (current === undefined) return type === 'boolean' && value === false ? {} : createdVariants(type, value);
  const text = JSON.stringify(value);
  const holding = Object.keys(current.variants).find((name) => JSON.stringify(current.variants[name]) === text);
  if (holding !== undefined) return holding === current.defaultVariant ? {} : { defaultVariant: holding };
  let name = kDefaultVariant;
  for (let i = 2; Object.hasOwn(current.variants, name); i++) name = `${kDefaultVariant}-${i}`;
  return { variants: { ...current.variants, [name]: value }, defaultVariant: name };
}
