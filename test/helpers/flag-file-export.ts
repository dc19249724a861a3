// A project as `flagwire export` writes it in Flagwire's own format (the console's view), read from a test
// world's store: the file tests start from, edit and apply.
import { exportProject } from '../../src/flags-as-code/export.js';
import type { World } from './world.js';
import { getProject } from '../../src/model/records/project-records.js';

export type ExportedFile = Record<string, unknown> & { flags: Record<string, Record<string, unknown>> };

export function exportedFile(world: World, projectId: string): ExportedFile {
  world.store.resetReadTxn();
  return exportProject(
    world.store,
    getProject(world.store, projectId)!,
    { format: 'flagwire', env: null },
    'console',
    Date.now(),
  ) as ExportedFile;
}
