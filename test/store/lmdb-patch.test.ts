// scripts/patch-lmdb.mjs (run by npm's postinstall) bounds lmdb-js's page-write error message, which
// otherwise overflows its 100-byte buffer on a full or read-only disk and corrupts the heap. This checks
// that no lmdb-js native binary or source installed here still holds the unbounded format string; the
// behaviour itself is proved by test/reliability/storage.test.ts (the server stops cleanly afterwards).
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const kUnbounded = 'buffer sizes %i %i %i';

let lmdbDir = dirname(createRequire(import.meta.url).resolve('lmdb'));
while (!existsSync(join(lmdbDir, 'package.json'))) lmdbDir = dirname(lmdbDir);

t.test('no installed lmdb-js binary keeps the overflowing page-write error format', async (t) => {
  const scope = join(lmdbDir, '..', '@lmdb');
  const binaries = existsSync(scope)
    ? readdirSync(scope).flatMap((pkg) =>
        readdirSync(join(scope, pkg), { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.node'))
          .map((f) => join(scope, pkg, f)),
      )
    : [];
  t.ok(binaries.length > 0, `lmdb-js prebuilt binaries found (${binaries.length})`);
  for (const file of binaries) {
    const bytes = readFileSync(file);
    t.equal(bytes.indexOf(kUnbounded), -1, `${file} is patched`);
    t.not(bytes.indexOf('Attempting to write page at position %u, size %u, blocks %u\0'), -1, `${file} keeps the bounded message`);
  }
  const source = join(lmdbDir, 'dependencies/lmdb/libraries/liblmdb/mdb.c');
  if (existsSync(source)) t.notMatch(readFileSync(source, 'latin1'), kUnbounded, 'the C source (for builds from source) is patched too');
});
