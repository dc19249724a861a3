// A process that runs a writer thread and nothing else of a node: it opens a fresh data dir, starts the
// writer on it (src/writer/client.ts), has it commit one command and exits. test/capability/parts-on-use.test.ts
// runs it with the module log (module-log.ts) to see what the writer thread loads.
import { pino } from 'pino';
import { kOperator } from '../../src/actor/audit-actor.js';
import { Clock } from '../../src/clock.js';
import { kOrgCommands } from '../../src/orgs/command-table.js';
import { WriterClient } from '../../src/writer/client.js';
import { scratchDir } from './scratch-dir.js';
import { Store } from './store.js';

const dataDir = scratchDir('flagwire-writer-only-');
// The data file first, as the server makes it before it starts the writer.
Store.open(dataDir).close();
const writer = WriterClient.create(dataDir, Clock.create(), 60_000, pino({ level: 'silent' }));
const org = await writer.call(kOrgCommands.orgCreate, { principal: kOperator, name: 'Writer only', plan: 'teams' });
await writer.close();
process.stdout.write(`${JSON.stringify(org)}\n`);
