// Closes a heap overflow in lmdb-js (3.5.6, the newest release) that a failed disk write sets off.
//
// When LMDB cannot write a page (a full disk: ENOSPC, a file system turned read-only: EROFS), mdb.c's
// mdb_page_flush formats its error into a 100-byte malloc:
//   last_error = malloc(100);
//   sprintf(last_error, "Attempting to write page at position %u, size %u, blocks %u, buffer sizes %i %i %i", ...)
// The last two numbers are iovec lengths that were never set (stack garbage), so the text often runs to
// 105-115 bytes and overwrites the next heap chunk's header. The process then aborts later, in whatever
// thread frees that chunk ("free(): invalid pointer" at shutdown, found by test/reliability/storage.test.ts).
//
// The fix ends the format string before "buffer sizes": the text is then at most 84 bytes. The message
// keeps the position, size and block count; the garbage lengths were never useful. The string has the
// same bytes in the C source and in every prebuilt binary (it sits in their read-only data), so this
// replaces it in place, same length, NUL-terminated early: nothing else in the binary moves.
// Idempotent; a release that no longer holds the string is left alone.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const kFormat = 'Attempting to write page at position %u, size %u, blocks %u, buffer sizes %i %i %i';
const kBounded = 'Attempting to write page at position %u, size %u, blocks %u';

/** The files that may hold the format string: the C source, lmdb-js's own builds and its prebuilt packages. */
function candidates() {
  let lmdbDir;
  try {
    // lmdb's "exports" hide its package.json: resolve its entry point and walk up to its folder.
    lmdbDir = dirname(createRequire(import.meta.url).resolve('lmdb'));
    while (!existsSync(join(lmdbDir, 'package.json'))) lmdbDir = dirname(lmdbDir);
  } catch {
    return [];
  }
  const files = [join(lmdbDir, 'dependencies/lmdb/libraries/liblmdb/mdb.c')];
  const nativeDirs = [join(lmdbDir, 'build/Release'), join(lmdbDir, 'prebuilds')];
  const scope = join(lmdbDir, '..', '@lmdb');
  if (existsSync(scope)) for (const name of readdirSync(scope)) nativeDirs.push(join(scope, name));
  for (const dir of nativeDirs) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { recursive: true })) {
      if (String(entry).endsWith('.node')) files.push(join(dir, String(entry)));
    }
  }
  return files.filter((f) => existsSync(f));
}

/** Replaces the format string in `file`; returns how many copies it replaced. */
function patchFile(file) {
  const bytes = readFileSync(file);
  const needle = Buffer.from(kFormat, 'latin1');
  let replaced = 0;
  if (file.endsWith('.c')) {
    const text = bytes.toString('latin1');
    if (!text.includes(kFormat)) return 0;
    writeFileSync(file, text.split(kFormat).join(kBounded), 'latin1');
    return 1;
  }
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + needle.length)) {
    // Same length: the bounded text, then NULs where "buffer sizes ..." was.
    bytes.fill(0, at, at + needle.length);
    bytes.write(kBounded, at, 'latin1');
    replaced++;
  }
  if (replaced > 0) writeFileSync(file, bytes);
  return replaced;
}

let total = 0;
for (const file of candidates()) total += patchFile(file);
if (total > 0) console.log(`flagwire: bounded lmdb-js's page-write error message in ${total} file(s) (see scripts/patch-lmdb.mjs)`);
