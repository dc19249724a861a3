// The usage reports capability's writer command by name (src/writer/command.ts): what its routes call by
// value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { countUsageReport } from './usage-report-commands.js';

export const kUsageReportCommands = commandTable({ countUsageReport });
