// The events capability's storage, as it declares it (src/events/capability.ts: sideFiles): the tally
// file in the data dir (tally-file.ts keeps its key layouts). Plain data, loaded with the declaration.
import type { SideFile } from '../../store/side-storage.js';

/** The tally file's databases (tally-file.ts says what each holds). */
export type TallyDatabase =
  | 'batches'
  | 'batchExpiry'
  | 'subjects'
  | 'arms'
  | 'sums'
  | 'metricNames'
  | 'usage'
  | 'raw'
  | 'rawExpiry'
  | 'rawSubjects';

/** The tally file: tally.mdb in the data dir. */
export const kTallyFile: SideFile<TallyDatabase> = {
  file: 'tally.mdb',
  databases: ['batches', 'batchExpiry', 'subjects', 'arms', 'sums', 'metricNames', 'usage', 'raw', 'rawExpiry', 'rawSubjects'],
};
