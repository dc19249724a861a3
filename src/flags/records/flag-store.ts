// Flags' records as the store keeps them (keyedRecords: flags and their evaluation counts each in a
// database of their own, found through the lookups they declare), and every read and write of them.
// Flags are configuration: relayed, and every write of one moves the store's revision.
import { byCreation } from '../../model/by-creation.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { compositeKey, keyedRecords } from '../../store/record-kinds.js';
import type { EnvironmentUsage, Flag, FlagUsage } from '../../model/flags.js';

export const kFlagRecords = keyedRecords<Flag>()({
  name: 'flag',
  database: 'flags',
  relayed: true,
  key: (flag) => flag.id,
  deletedAs: 'flagDeleted',
  indexes: {
    /**
     * A project's flags in service: an archived flag leaves it, and so every surface that serves or lists
     * the project's flags, with nothing to filter on the way (docs/decisions.md: archived flags).
     */
    project: { keysOf: (flag) => (flag.archivedAt === undefined ? [flag.projectId] : []) },
    /** A project's archived flags. */
    archived: { keysOf: (flag) => (flag.archivedAt === undefined ? [] : [flag.projectId]) },
    /** A flag by its name (unique in its project, archived flags included: a name is kept until deleted for good). */
    name: { keysOf: (flag) => [[flag.projectId, flag.name]] },
  },
});

/** How often each flag was evaluated: written every minute, and it moves no revision (no reader caches it). */
export const kUsageRecords = keyedRecords<FlagUsage>()({
  name: 'usage',
  database: 'usage',
  relayed: false,
  key: (usage) => usage.flagId,
  deletedAs: 'usageDeleted',
  // Deleting a flag deletes its usage (docs/operations.md).
  hangsOff: { kind: 'flag', via: null, onDelete: 'cascade' },
});

/**
 * How often each flag was evaluated in each environment (docs/decisions.md: Usage per environment): a kind
 * of its own beside the totals, so a flush writes only the environments it counted, and usage written
 * before it was kept reads as none per environment (the totals keep it).
 */
export const kEnvironmentUsageRecords = keyedRecords<EnvironmentUsage>()({
  name: 'environmentUsage',
  database: 'usageByEnvironment',
  relayed: false,
  key: (usage) => compositeKey(usage.flagId, usage.environment),
  deletedAs: 'environmentUsageDeleted',
  indexes: { flag: { keysOf: (usage) => [usage.flagId] } },
  hangsOff: { kind: 'flag', via: 'flag', onDelete: 'cascade' },
});

export function getFlag(r: Pick<StoreReader, 'getKeyed'>, id: string): Flag | undefined {
  return r.getKeyed(kFlagRecords, id);
}

/** The project's flags in service (not archived), oldest first. */
export function listFlags(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): Flag[] {
  return r.listKeyedBy(kFlagRecords, 'project', projectId).sort(byCreation);
}

/** The project's archived flags, oldest first. */
export function listArchivedFlags(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): Flag[] {
  return r.listKeyedBy(kFlagRecords, 'archived', projectId).sort(byCreation);
}

/** Every flag of the project, archived or not, oldest first: for what must follow a flag through its archive (a renamed environment, a fragment's uses). */
export function listAllFlags(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): Flag[] {
  return [...listFlags(r, projectId), ...listArchivedFlags(r, projectId)].sort(byCreation);
}

/** The project's flag of that name (names are unique in a project), by its lookup: no scan of the project's flags. */
export function findFlagByName(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string, name: string): Flag | undefined {
  return r.listKeyedBy(kFlagRecords, 'name', [projectId, name], { limit: 1 })[0];
}

export function putFlag(w: Pick<StoreWriter, 'putKeyed'>, flag: Flag): void {
  w.putKeyed(kFlagRecords, flag);
}

/** Removes the flag, and its usage with it (kUsageRecords.hangsOff, kEnvironmentUsageRecords.hangsOff). */
export function deleteFlag(w: Pick<StoreWriter, 'deleteKeyed'>, flag: Flag): void {
  w.deleteKeyed(kFlagRecords, flag);
}

/** Undefined for a flag never evaluated (or evaluated only in the last minute, not yet written). */
export function getUsage(r: Pick<StoreReader, 'getKeyed'>, flagId: string): FlagUsage | undefined {
  return r.getKeyed(kUsageRecords, flagId);
}

export function putUsage(w: Pick<StoreWriter, 'putKeyed'>, usage: FlagUsage): void {
  w.putKeyed(kUsageRecords, usage);
}

/** The flag's usage in `environment` (kSingleState for a single flag); undefined: none counted there. */
export function getEnvironmentUsage(r: Pick<StoreReader, 'getKeyed'>, flagId: string, environment: string): EnvironmentUsage | undefined {
  return r.getKeyed(kEnvironmentUsageRecords, compositeKey(flagId, environment));
}

/** The flag's usage in every environment it was counted in, by environment name. */
export function listEnvironmentUsage(r: Pick<StoreReader, 'listKeyedBy'>, flagId: string): EnvironmentUsage[] {
  return r
    .listKeyedBy(kEnvironmentUsageRecords, 'flag', flagId)
    .sort((a, b) => (a.environment < b.environment ? -1 : a.environment > b.environment ? 1 : 0));
}

export function putEnvironmentUsage(w: Pick<StoreWriter, 'putKeyed'>, usage: EnvironmentUsage): void {
  w.putKeyed(kEnvironmentUsageRecords, usage);
}
