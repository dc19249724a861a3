// Loading node-postgres for a node or a command (src/store/pg/pg-system.ts) leaves Node's fetch classes
// unmade: pg, as it loads, makes a `Response` to ask whether it runs in Cloudflare Workers, which made
// Node load undici (about 28 ms of CPU in every thread that loads pg). Each case runs in a fresh Node
// process, where nothing else has made them yet.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import t from 'tap';

const kPgSystem = new URL('../../src/store/pg/pg-system.js', import.meta.url).href;
const kPg = createRequire(import.meta.url).resolve('pg');

/**
 * What a fresh process reports after `load`: whether undici was loaded, then whether `Response` still works,
 * and whether Node has a `navigator` (Node 21 on), which pg asks first.
 */
function afterLoading(load: string): { undici: boolean; response: boolean; navigator: boolean } {
  const script = `${load}
const undici = process.moduleLoadList.some((m) => m.includes('undici'));
const response = typeof Response === 'function' && new Response('x').status === 200;
console.log(JSON.stringify({ undici, response, navigator: typeof navigator === 'object' }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

t.test("pg loaded through the store's loader does not make Node's fetch classes, which still work after", async (t) => {
  const seen = afterLoading(`const { newPool } = await import(${JSON.stringify(kPgSystem)});
const pool = newPool('postgres://127.0.0.1:1/none', 1);
await pool.end();`);
  t.equal(seen.undici, false, 'undici not loaded');
  t.equal(seen.response, true, 'Response works after');
});

// Where Node has no navigator (Node 20), pg as it is makes them: what the loader's hiding is for. Where it
// has one, pg asks that instead and makes none, and the hiding changes nothing (it can go once Node 20 does).
t.test('pg loaded as it is makes them exactly where Node has no navigator', async (t) => {
  const seen = afterLoading(`import { createRequire } from 'node:module';
createRequire(import.meta.url)(${JSON.stringify(kPg)});`);
  t.equal(seen.undici, !seen.navigator, `undici loaded where no navigator is (navigator: ${seen.navigator})`);
  t.equal(seen.response, true, 'Response works');
});
