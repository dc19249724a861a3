// Server start-up check that the data file can be read from end to end. The header check in
// data-file.ts runs on every open and is cheap, but it cannot see a page damaged in the middle of the
// file, on which LMDB may end the process (SIGBUS, SIGSEGV, abort) at the first request that reads
// it. So before the server opens the store, a child process (probe.ts) reads every record once: a
// crash or an LMDB error there becomes a refusal at start with a message, not a crash in service.
// Cost: one short-lived process that reads the whole file (Node's start plus the file's read time).
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { childProcess, storeChildEnv } from './child-env.js';
import { checkDataFile, StoreOpenError } from './data-file.js';

/** A probe that has not read the file within this time is stuck (a damaged page can loop a reader). */
const kProbeTimeoutMs = 120_000;
const kProbe = fileURLToPath(new URL('./probe.js', import.meta.url));

/**
 * Resolves when `path` is absent, empty or readable throughout; throws a StoreOpenError otherwise.
 * `databases`: the store's (its layout's); a database of another name is not read (opening the store
 * refuses it, saying whose it is). Left out: every database the file lists is read.
 */
export async function verifyDataFile(path: string, databases: readonly string[] = [], timeoutMs = kProbeTimeoutMs): Promise<void> {
  try {
    if (statSync(path).size === 0) return;
  } catch {
    return; // absent: the store creates it
  }
  checkDataFile(path);
  const child = childProcess().spawn(process.execPath, [kProbe, path, ...databases], {
    env: storeChildEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 2000) stderr += text;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, s) => resolve([c, s]));
  }).finally(() => clearTimeout(timer));
  if (code === 0) return;
  if (timedOut) throw new StoreOpenError(`${path} could not be read through within ${timeoutMs / 1000} s; check the disk`);
  const why =
    signal !== null ? `reading it crashed the reader (${signal})` : `reading it failed (${stderr.trim().split('\n')[0] || `exit ${code}`})`;
  throw new StoreOpenError(`${path} is damaged: ${why}; restore it from a backup or use another data directory`);
}
