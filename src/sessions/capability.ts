// Web console sessions and passwords as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { kSessionCommands } from './command-table.js';

export const kSessions = defineCapability({ name: 'sessions', commands: kSessionCommands });
