// Projects as the store keeps them (keyedRecords: each under its id in the projects database, filed by
// its organisation or, for a personal one, its owner), and every read and write of them. Projects are
// configuration: relayed, and every write of one moves the store's revision.
import { byCreation } from '../model/by-creation.js';
import type { Project } from '../model/projects.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';

export const kProjectRecords = keyedRecords<Project>()({
  name: 'project',
  database: 'projects',
  relayed: true,
  key: (project) => project.id,
  // An organisation's projects and a user's personal ones: a create's name check, `project list --org`
  // and the console's home read only those, never every project of the node.
  indexes: {
    org: { keysOf: (project) => (project.orgId === null ? [] : [project.orgId]) },
    personal: { keysOf: (project) => (project.orgId === null && project.ownerUserId !== null ? [project.ownerUserId] : []) },
  },
});

export function getProject(r: Pick<StoreReader, 'getKeyed'>, id: string): Project | undefined {
  return r.getKeyed(kProjectRecords, id);
}

/** Every project of the node, oldest first. */
export function listProjects(r: Pick<StoreReader, 'listKeyed'>): Project[] {
  return r.listKeyed(kProjectRecords).sort(byCreation);
}

/** An organisation's projects, oldest first. */
export function listOrgProjects(r: Pick<StoreReader, 'listKeyedBy'>, orgId: string): Project[] {
  return r.listKeyedBy(kProjectRecords, 'org', orgId).sort(byCreation);
}

/** A user's personal projects (of no organisation), oldest first. */
export function listPersonalProjects(r: Pick<StoreReader, 'listKeyedBy'>, userId: string): Project[] {
  return r.listKeyedBy(kProjectRecords, 'personal', userId).sort(byCreation);
}

export function putProject(w: Pick<StoreWriter, 'putKeyed'>, project: Project): void {
  w.putKeyed(kProjectRecords, project);
}
