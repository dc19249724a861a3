// The writer client's idle() barrier: it resolves only after every command sent before it has been
// answered (committed or refused), and at once when nothing is queued.
import { kOrgCommands } from '../../src/orgs/command-table.js';
import { kProjectCommands } from '../../src/projects/command-table.js';
import t from 'tap';
import { open } from 'lmdb';
import { pino } from 'pino';
import { Clock } from '../../src/clock.js';
import { dataFilePath } from '../../src/store/layout.js';
import { Store } from '../helpers/store.js';
import { WriterClient } from '../../src/writer/client.js';
import { tempDataDir } from '../helpers/server.js';
import { kOperator } from '../../src/actor/audit-actor.js';

t.test('idle() resolves after every earlier command is committed, without a transaction of its own', async (t) => {
  const dataDir = tempDataDir();
  // Create the data file first, as the server does before it starts the writer.
  await Store.open(dataDir).close();
  const writer = WriterClient.create(dataDir, Clock.create(), 10_000, pino({ level: 'silent' }));
  t.teardown(() => writer.close());

  await writer.idle();
  // LMDB's last transaction id, read from the file: it moves with every commit of any kind.
  const file = open({ path: dataFilePath(dataDir), readOnly: true });
  t.teardown(() => file.close());
  const lastTxnId = () => (file.getStats() as { lastTxnId: number }).lastTxnId;
  const txnBefore = lastTxnId();
  for (let i = 0; i < 10; i++) await writer.idle();
  t.equal(lastTxnId(), txnBefore, 'a barrier alone commits nothing');

  for (let round = 0; round < 20; round++) {
    const order: string[] = [];
    const commands = Array.from({ length: 30 }, (_, i) =>
      writer
        .call(kOrgCommands.orgCreate, { principal: kOperator, name: `org ${round}-${i}`, plan: 'teams' })
        .then(() => order.push(`org${i}`)),
    );
    // One refused command among them: a refusal also counts as answered.
    const refused = writer
      .call(kProjectCommands.projectCreate, { principal: kOperator, name: 'p', orgId: 'org_doesNotExist', kind: 'single' })
      .catch(() => order.push('refused'));
    await writer.idle().then(() => order.push('idle'));
    await Promise.all([...commands, refused]);
    t.equal(order.at(-1), 'idle', `round ${round}: the barrier came after all 31 earlier commands`);
    t.equal(order.length, 32);
  }
  t.ok(lastTxnId() > txnBefore, 'the commands themselves were committed');
});
