// flagd's sync port (FLAGWIRE_SYNC_PORT) as a refusal names it: the sync service's own listen
// (sync-server.ts) and start-up's try before anything starts (src/server/listen.ts) say the same.
import type { PortSetting } from '../config.js';

export const kSyncPort: PortSetting = { setting: 'FLAGWIRE_SYNC_PORT', whenTaken: 'choose another port, or 0 to serve no sync service' };
