// Writer commands run in process against a real store in a temporary folder: `run` applies one in its
// own transaction at a fixed time (or the one given); `refused` expects a refusal, checks that nothing
// was written, and returns the error for the test to match; `member` makes a user a member of an
// organisation, the set-up most command tests start with.
import type { Role } from '../../src/model/accounts.js';
import { Store } from './store.js';
import { runCommand, type CommandInput, type CommandName, type CommandOutput } from '../../src/writer/thread/commands.js';
import type { TestContext } from './cli.js';
import { tempDir } from './scratch-dir.js';
import { kOperator } from '../../src/actor/audit-actor.js';

export interface CommandStore {
  store: Store;
  run<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): CommandOutput<N>;
  refused<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): { code: string; message: string };
  /** A new user (`email`, `name`) added to `orgId` with `role`. */
  member(orgId: string, role: Role, email: string, name?: string): CommandOutput<'userCreate'>;
}

export function commandStore(t: TestContext, prefix: string, at: number): CommandStore {
  const store = Store.open(tempDir(t, prefix));
  t.teardown(() => store.close());
  const run = <N extends CommandName>(name: N, input: CommandInput<N>, now = at): CommandOutput<N> =>
    store.transact((w) => runCommand(w, name, input, now));
  const refused = <N extends CommandName>(name: N, input: CommandInput<N>, now = at) => {
    const before = store.exportRecords();
    try {
      run(name, input, now);
    } catch (err) {
      t.strictSame(store.exportRecords(), before, `${name} refused: nothing written`);
      return err as { code: string; message: string };
    }
    throw new Error(`${name} was not refused`);
  };
  const member = (orgId: string, role: Role, email: string, name?: string) => {
    const user = run('userCreate', name === undefined ? { email } : { email, name });
    run('orgAddMember', { principal: kOperator, orgId, userId: user.id, role });
    return user;
  };
  return { store, run, refused, member };
}
