// The console's browser code is checked as browser code by the build (scripts/check-browser-code.mjs, on
// src/web-console/browser/tsconfig.json: the ES and DOM libraries, no package's types). Here the build's
// check is run in this process, through the function the build's script calls: on the browser modules as
// they are, and with probe modules added that name something only Node declares, directly or through a
// type imported from the server's code. The first check starts from the build's verdicts
// (dist/.tsbuildinfo-browser, which `npm run build` writes; read here, never written), each after it
// from the one before, so that TypeScript checks again only what changed around it: the probes, and any
// browser module changed since the build (a process per check, each checking every file, was about 20
// CPU s; checking every file in the first, about 5).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';

const kRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** What scripts/check-browser-code.mjs exports (a JavaScript module: its shape is declared here). */
interface BrowserCheck {
  checkBrowserCode(
    extraFiles: string[],
    previous: unknown,
    options: { fromBuild: boolean },
  ): { code: number; report: string; program: unknown };
  kNodeDeclaredNote: string;
}
const { checkBrowserCode, kNodeDeclaredNote } = (await import(`${kRoot}scripts/check-browser-code.mjs`)) as BrowserCheck;
/** The last check's program, which the next one is given. */
let previous: unknown;

/** The check's exit status and report, with `probes` (file name to source) checked as browser modules too. */
function check(t: Test, probes: Record<string, string>): { code: number; report: string } {
  // Under the root tsconfig's rootDir, as the browser modules are; dist/ is the build's, and git-ignored.
  const dir = mkdtempSync(`${kRoot}dist/browser-probes-`);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = Object.entries(probes).map(([name, source]) => {
    writeFileSync(`${dir}/${name}`, source);
    return `${dir}/${name}`;
  });
  const { code, report, program } = checkBrowserCode(files, previous, { fromBuild: true });
  previous = program;
  return { code, report };
}

t.test('the browser modules pass the check as they are', async (t) => {
  const { code, report } = check(t, {});
  t.equal(report, '');
  t.equal(code, 0);
});

t.test('a Node global or module named in browser code fails the check', async (t) => {
  const probes: Record<string, string> = {
    'process.ts': 'export const mode = process.env.NODE_ENV;\n',
    'global-this.ts': 'export const mode = globalThis.process;\n',
    'buffer.ts': "export const bytes = Buffer.from('x');\n",
    'set-immediate.ts': 'setImmediate(() => {});\nexport {};\n',
    'require.ts': "export const fs = require('fs');\n",
    'dirname.ts': 'export const here = __dirname;\n',
    'node-module.ts': "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
    'node-type.ts': "import type { Worker } from 'node:worker_threads';\nexport type W = Worker;\n",
  };
  const { code, report } = check(t, probes);
  t.equal(code, 1);
  for (const name of Object.keys(probes)) t.match(report, new RegExp(`${name}\\(\\d+,\\d+\\): error TS`), `${name} is refused`);
  // No package's types loaded Node's declarations, so the types were checked: the globals' errors above.
  t.notMatch(report, kNodeDeclaredNote);
});

t.test("a type imported from server code that reaches Node fails the check, naming Node's modules", async (t) => {
  const { code, report } = check(t, {
    'server-type.ts': `import type { ApiCall } from '${kRoot}src/console-route/call.js';\nexport type Call = ApiCall;\n`,
  });
  t.equal(code, 1);
  // The call's config and writer: Node's modules, and a package whose types load Node's for the whole program.
  t.match(report, "src/config.ts imports 'node:fs', which is not browser code");
  t.match(report, "src/writer/client.ts imports 'pino', which is not browser code");
  // pino's types load Node's declarations, against which the types would check: they are not checked, and the report says so.
  t.match(report, kNodeDeclaredNote);
  t.notMatch(report, /error TS/);
});
