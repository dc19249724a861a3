// StoreWriter.tentatively (the approvals gate's trial of a command): a function that throws is rolled
// back whole, its writes gone from the change set being recorded too, so a caller that catches the
// error and goes on (the gate, trying the change on top of its author's pending request) commits
// nothing of it: PostgreSQL's write path commits exactly the change set rehearse records.
import t from 'tap';
import { tempDir } from '../helpers/scratch-dir.js';
import { Store } from '../helpers/store.js';
import { isDemoSeeded, markDemoSeeded } from '../../src/writer/thread/demo-records.js';

const store = Store.open(tempDir(t));
t.teardown(() => store.close());

t.test('a write made before a throw in tentatively is not in the change set', async (t) => {
  const { settled, changes } = store.rehearse([
    (w) => {
      t.throws(
        () =>
          w.tentatively(
            () => {
              markDemoSeeded(w, 1);
              throw new Error('refused');
            },
            () => true,
          ),
        /refused/,
      );
      return isDemoSeeded(w) ? 'kept' : 'went on';
    },
  ]);
  t.strictSame(settled, [{ ok: true, value: 'went on' }]);
  t.strictSame(changes, [], 'nothing recorded');
});
