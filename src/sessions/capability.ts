// Web console sessions and passwords as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { sessionEnd, sessionStart, userPassword } from './session-commands.js';

export const kSessionCommands = commandTable({ userPassword, sessionStart, sessionEnd });

export const kSessions = defineCapability({ name: 'sessions', commands: kSessionCommands });
