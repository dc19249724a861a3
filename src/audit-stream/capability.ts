// The audit stream as a capability (src/capability/capability.ts): every audit entry, of every
// capability, appended to a JSON-lines file and/or sent to syslog as the node's settings say
// (FLAGWIRE_AUDIT_FILE, FLAGWIRE_AUDIT_SYSLOG; docs/audit-stream.md). Off unless one is set.
import { defineCapability } from '../capability/capability.js';

export const kAuditStream = defineCapability({
  name: 'audit-stream',
  // Loaded when a node starts it (as mail's mailer is: src/mail/capability.ts says why).
  background: [
    {
      name: 'audit stream',
      phase: 'outbox',
      // A relay holds no audit log: nothing is written there.
      runsOnRelay: false,
      start: async (node) => (await import('./background.js')).startAuditStreams(node),
    },
  ],
});
