// What every test gives the stock flagd provider (@openfeature/flagd-provider) beside its own settings.
import { FlagdProvider } from '@openfeature/flagd-provider';

/**
 * Its connection deadline (`deadlineMs`). The default, 500 ms, suits a client beside its daemon; on a
 * loaded 2-core machine a test's first connection took longer, and the provider then failed its start and
 * went on reconnecting, holding the test file open until the file's own bound (test/sync/three-way.ts,
 * six at once, five of them). A minute only catches a hang.
 */
export const kFlagdDeadlineMs = 60_000;

/** The stock provider in-process, syncing the set `selector` names from the sync service on this host's `port`. */
export function inProcessFlagdProvider(port: number, selector: string): FlagdProvider {
  return new FlagdProvider({ resolverType: 'in-process', deadlineMs: kFlagdDeadlineMs, host: '127.0.0.1', port, selector });
}
