// Whether a value is a snapshot as the server sends it: apart from the snapshot file (which needs Node's
// file system) so that the edge (src/edge), which fetches snapshots as the provider does, can import it.
import { compiledOnUse } from '../typebox.js';
import { Snapshot } from '../model/snapshot-shape.js';

const kSnapshotCheck = compiledOnUse(Snapshot);

/** Whether `value` is a snapshot as the server sends it (a file or an answer that is not is never used). */
export function isSnapshot(value: unknown): value is Snapshot {
  return kSnapshotCheck.Check(value);
}
