// The LMDB store as a test opens it: with the layout every process of Flagwire opens it with, the one
// the capabilities declare (src/capabilities.ts kStoreLayout).
import { kStoreLayout } from '../../src/capabilities.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';

export const Store = {
  open(dataDir: string, options: { readOnly?: boolean } = {}): LmdbStore {
    return LmdbStore.open(dataDir, options.readOnly === true ? { readOnly: true, layout: kStoreLayout } : { layout: kStoreLayout });
  },
};
export type Store = LmdbStore;
