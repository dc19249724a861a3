// The mail outbox on the command line: `mail list`.
import { command, type CliCommand } from '../cli/command/cli-command.js';
import { formatTime, indent, renderTable } from '../cli/command/output.js';
import type { MailMessage } from '../model/mail.js';
import { listMail } from '../model/records/mail-records.js';

export function renderMail(messages: readonly MailMessage[]): string {
  if (messages.length === 0) return 'No mail.';
  const table = renderTable(
    ['SEQ', 'AT', 'TO', 'SUBJECT', 'SENT'],
    messages.map((m) => [String(m.seq), formatTime(m.at), m.to, m.subject, deliveryText(m)]),
  );
  const bodies = messages.map(
    (m) =>
      `--- #${m.seq} to ${m.to}: ${m.subject}\n${indent(m.text)}${m.lastError === null ? '' : `\n  (last delivery error: ${m.lastError})`}`,
  );
  return [table, '', ...bodies].join('\n');
}

function deliveryText(m: MailMessage): string {
  const attempts = `${m.attempts} attempt${m.attempts === 1 ? '' : 's'}`;
  if (m.sentAt !== null) return formatTime(m.sentAt);
  if (m.failedAt !== null) return `failed ${formatTime(m.failedAt)} (${attempts})`;
  return `pending (${attempts})`;
}

export const kMailCli: readonly CliCommand[] = [
  command({
    name: 'mail list',
    usage: 'mail list',
    summary: 'the mail outbox (denial notices), oldest first -> {messages}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ messages: listMail(r) })),
    human: (result: { messages: MailMessage[] }) => renderMail(result.messages),
  }),
];
