// Mail as a capability (src/capability/capability.ts): the outbox's commands (claimed, released and
// recorded by the mailer, src/mail/mailer.ts), `mail list`, and the console's mail page.
import { kMailRecords } from '../model/records/mail-records.js';
import { defineCapability } from '../capability/capability.js';
import { kMailCommands } from './command-table.js';

export const kMail = defineCapability({
  name: 'mail',
  databases: ['mail'],
  records: [kMailRecords],
  commands: kMailCommands,
  cli: async () => (await import('./cli.js')).kMailCli,
  consoleRoutes: async () => (await import('./console-routes.js')).kMailRoutes,
  // Loaded when a node starts it, not with the declaration: the writer thread and the command line load
  // every capability and run no background work; and background.ts calls this file's commands, so a
  // static import would make a circle.
  background: [
    { name: 'mailer', phase: 'outbox', runsOnRelay: false, start: async (node) => (await import('./background.js')).startMailer(node) },
  ],
});
