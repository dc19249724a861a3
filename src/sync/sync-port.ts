// flagd's sync port (FLAGWIRE_SYNC_PORT), declared by the sync service's background work (capability.ts),
// so start-up tries it before anything starts (src/server/listen.ts), and named by the service's own
// listen (sync-server.ts): both refusals say the same.
import type { PortSetting } from '../port-setting.js';

export const kSyncPort: PortSetting = {
  setting: 'FLAGWIRE_SYNC_PORT',
  whenTaken: 'choose another port, or 0 to serve no sync service',
  port: (config) => config.syncPort,
};
