// How the store starts its own short-lived Node processes (node:child_process, and their environment): the
// probe that reads the data file through before a start (verify.ts) and the lock file's repair
// (write-txn.ts). Each opens the file and reads; neither needs this process's Node settings. Preloads in
// NODE_OPTIONS (a test runner's hooks) only slow them, and the certificates NODE_EXTRA_CA_CERTS names
// (they make no connection) are parsed by Node as the process starts, before any code runs: for a
// system bundle, nearly as much CPU as the probe's own work.
import { loadOnUse } from '../load-on-use.js';

/**
 * node:child_process, loaded when the store first starts one of them (src/load-on-use.ts): it loads
 * node:net, node:dgram and DNS with it, into each thread that opens the store (a writer
 * thread, every command), where the repair almost never runs and the check runs only at a start.
 */
export const childProcess = loadOnUse<typeof import('node:child_process')>('node:child_process');

/** This process's environment less the Node settings a store's child process has no use for. */
export function storeChildEnv(): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _options, NODE_EXTRA_CA_CERTS: _certificates, ...env } = process.env;
  return env;
}
