// Writer commands run in process against a real store in a temporary folder: `run` applies one in its
// own transaction at a fixed time (or the one given); `refused` expects a refusal, checks that nothing
// was written, and returns the error for the test to match.
import { LmdbStore as Store } from '../../src/store/lmdb-store.js';
import { runCommand, type CommandInput, type CommandName, type CommandOutput } from '../../src/writer/commands.js';
import type { TestContext } from './cli.js';
import { tempDir } from './scratch-dir.js';

export interface CommandStore {
  store: Store;
  run<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): CommandOutput<N>;
  refused<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): { code: string; message: string };
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
  return { store, run, refused };
}
