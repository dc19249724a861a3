// Projects and their audiences as the store keeps them (keyedRecords: a project under its id in the
// projects database, filed by its organisation or, for a personal one, its owner; an audience under its id
// in the audiences database, filed by its project), and every read and write of them. Both are
// configuration: relayed, and every write of one moves the store's revision.
import { byCreation } from '../by-creation.js';
import type { Audience, Project } from '../projects.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

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

export const kAudienceRecords = keyedRecords<Audience>()({
  name: 'audience',
  database: 'audiences',
  relayed: true,
  key: (audience) => audience.id,
  indexes: {
    /** A project's audiences, in the order of their ids. */
    project: { keysOf: (audience) => [audience.projectId] },
  },
});

export function getAudience(r: Pick<StoreReader, 'getKeyed'>, id: string): Audience | undefined {
  return r.getKeyed(kAudienceRecords, id);
}

/** The project's audiences, in the order of their ids. */
export function listAudiences(r: Pick<StoreReader, 'listKeyedBy'>, projectId: string): Audience[] {
  return r.listKeyedBy(kAudienceRecords, 'project', projectId);
}

export function putAudience(w: Pick<StoreWriter, 'putKeyed'>, audience: Audience): void {
  w.putKeyed(kAudienceRecords, audience);
}
