// The README's walk-through and the docs pages' credential-free examples, taken from the files themselves
// and run against a fresh `serve --demo` (an empty data dir, as `npm start` on a new clone):
//
// - The README's "Five minutes" section: every ```sh block, in order, through one `bash` with `set -eo
//   pipefail`, as a user pastes them into a second terminal. `npx flagwire` is node_modules/.bin/flagwire
//   (a shell function stands in for npx and runs it, as npx does: test/cli/npx.test.ts) on the server's data dir
//   (FLAGWIRE_DATA), and http://127.0.0.1:8080 is the test server. The `# …` lines under a command are
//   what it must print (`…` stands for any text); the password the last step asks for comes on standard
//   input, and the test then signs in to the web console with it.
// - docs/*.md: every `curl` line aimed at 127.0.0.1:8080 in a ```sh block (the credential-free
//   examples: OFREP, change stream, OpenAPI, metrics, readiness), with the `# {…}` answer shown under it;
//   a block that keeps an answer in a shell variable (the OFREP ETag sent back) runs whole in bash, as
//   the walk-through does; and the OpenFeature snippet.
//
// So the examples cannot drift from what a new user gets: the demo's fixed ids and user, the command
// line's options and output, the answers shown.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { plain, plainNode } from '../helpers/plain-process.js';
import { startTestServer } from '../helpers/server.js';
import { signIn } from '../helpers/web-console.js';

const kRepo = fileURLToPath(new URL('../../../', import.meta.url));
const kEnsureJq = `${kRepo}scripts/ensure.sh`;
const kReadme = readFileSync(`${kRepo}README.md`, 'utf8');
const kReadmeBase = 'http://127.0.0.1:8080';
const kDocs = readdirSync(`${kRepo}docs`)
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ file: `docs/${f}`, text: readFileSync(`${kRepo}docs/${f}`, 'utf8') }));
const kWalkthroughHeading = '## Five minutes with Flagwire';
/** What the walk-through's `user password` step is given on standard input, as a user would type it. */
const kPassword = 'walk-through password 42';
const kDemoOwner = 'owner@demo.flagwire.test';

const server = await startTestServer({ demo: true });
t.teardown(async () => {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
});

// ---- shown answers -----------------------------------------------------------------------------

/** Marks a bare `…` in shown JSON (`"updatedAt":…`): any value. */
const kAnyValue = '\u0000any';

/** Shown JSON, with each `…` outside a string turned into kAnyValue. */
function parseShownJson(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else out += c === '…' ? JSON.stringify(kAnyValue) : c;
  }
  return JSON.parse(out);
}

/** Text where each `…` stands for any run of characters. */
function matchesText(actual: string, shown: string): boolean {
  const pattern = shown
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(actual);
}

/** Equal, where kAnyValue stands for any value and a string with `…` in it for any string of that shape. */
function matchesShown(actual: unknown, shown: unknown): boolean {
  if (shown === kAnyValue) return true;
  if (typeof shown === 'string') return typeof actual === 'string' && (shown.includes('…') ? matchesText(actual, shown) : actual === shown);
  if (shown === null || typeof shown !== 'object') return actual === shown;
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual) !== Array.isArray(shown)) return false;
  const a = actual as Record<string, unknown>;
  const s = shown as Record<string, unknown>;
  return Object.keys(s).length === Object.keys(a).length && Object.keys(s).every((k) => Object.hasOwn(a, k) && matchesShown(a[k], s[k]));
}

/** Whether a command's output is what the README shows: JSON compared as JSON, anything else as text. */
function outputMatches(output: string, shown: string): boolean {
  if (/^[[{]/.test(shown)) {
    try {
      return matchesShown(JSON.parse(output), parseShownJson(shown));
    } catch {
      return false;
    }
  }
  return matchesText(output, shown);
}

t.test('the shown-answer comparison can fail', async (t) => {
  t.ok(outputMatches('{"id":"flg_x","n":1}', '{"id":"flg_…","n":…}'));
  t.notOk(outputMatches('{"id":"prj_x","n":1}', '{"id":"flg_…","n":…}'), 'a string of another shape');
  t.notOk(outputMatches('{"id":"flg_x"}', '{"id":"flg_…","n":…}'), 'a missing field');
  t.notOk(outputMatches('{"id":"flg_x","n":1,"m":2}', '{"id":"flg_…","n":…}'), 'an extra field');
  t.notOk(outputMatches('{"on":false}', '{"on":true}'));
  t.ok(outputMatches('true', 'true'));
  t.notOk(outputMatches('false', 'true'));
});

// ---- the README's walk-through -----------------------------------------------------------------

interface Step {
  /** The command as written, continuation lines and here-documents included. */
  command: string;
  /** The `# ` lines right below it, without `# `, joined with newlines ('' when none). */
  shown: string;
}

function shBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The commands of a shell block: a line, its `\` continuations, and a here-document's lines to its end word. */
function steps(block: string): Step[] {
  const lines = block.split('\n');
  const out: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!;
    if (first.trim() === '' || first.startsWith('#')) continue;
    const command = [first];
    while (command[command.length - 1]!.endsWith('\\') && i + 1 < lines.length) command.push(lines[++i]!);
    const heredoc = /<<-?\s*'?(\w+)'?/.exec(command.join('\n'));
    if (heredoc) while (i + 1 < lines.length && lines[i] !== heredoc[1]) command.push(lines[++i]!);
    const shown: string[] = [];
    while (lines[i + 1]?.startsWith('# ')) shown.push(lines[++i]!.slice(2));
    out.push({ command: command.join('\n'), shown: shown.join('\n') });
  }
  return out;
}

const kWalkthrough = (() => {
  const start = kReadme.indexOf(kWalkthroughHeading);
  const end = kReadme.indexOf('\n## ', start + kWalkthroughHeading.length);
  return start === -1 ? '' : kReadme.slice(start, end === -1 ? undefined : end);
})();
const kSteps = shBlocks(kWalkthrough).flatMap(steps);

/** What `npx flagwire` runs in a clone after `npm install` (the build's link to dist/src/cli/flagwire.cjs). */
const kBin = 'node_modules/.bin/flagwire';

interface Run {
  code: number | null;
  /** Each step's output (stdout), by step index, trimmed; missing for steps not reached. */
  outputs: string[];
  stderr: string;
}

/**
 * Every step in one bash, as pasted into one terminal, each step's output framed by a marker line;
 * `input` is what the terminal is given on standard input.
 */
async function runSteps(allSteps: readonly Step[], input: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-walkthrough-'));
  const marker = (i: number | 'end') => `printf '\\n@@step %s@@\\n' ${i}`;
  const script = [
    'set -eo pipefail',
    // npx flagwire in a clone runs node_modules/.bin/flagwire; nothing else of npx is part of the walk-through.
    `npx() { if [ "$1" = flagwire ]; then shift; ${JSON.stringify(join(kRepo, kBin))} "$@"; else echo "npx $1 is not part of the walk-through" >&2; return 127; fi; }`,
    ...allSteps.flatMap((step, i) => [marker(i), step.command.replaceAll(kReadmeBase, server.baseUrl)]),
    marker('end'),
  ].join('\n');
  writeFileSync(join(dir, 'walkthrough.sh'), `${script}\n`);
  // plain: bash, and the node it runs, as users run them, without the test runner's loaders.
  const child = spawn(...plain('bash', [join(dir, 'walkthrough.sh')]), {
    cwd: kRepo,
    env: { ...process.env, FLAGWIRE_DATA: server.dataDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });
  const outputs: string[] = [];
  const parts = stdout.split(/\n@@step (\d+|end)@@\n/);
  // parts: [before the first marker, index, its output, index, its output, ..., 'end', after]
  for (let p = 1; p + 1 < parts.length; p += 2) if (parts[p] !== 'end') outputs[Number(parts[p])] = parts[p + 1]!.trim();
  return { code, outputs, stderr };
}

t.test('the README has the walk-through this test runs', async (t) => {
  t.not(kWalkthrough, '', `README.md has a "${kWalkthroughHeading}" section`);
  const all = kSteps.map((s) => s.command).join('\n');
  for (const needed of [
    'npx flagwire token create',
    '/api/v1/flags',
    '-X PATCH',
    '/v1/flags/$FLAG',
    '@openfeature/ofrep-provider',
    'npx flagwire user password',
  ]) {
    t.ok(all.includes(needed), `the walk-through runs ${needed}`);
  }
  t.ok(kSteps.filter((s) => s.shown !== '').length >= 6, 'it shows what its commands print');
  // Every curl of the README is the walk-through's, so none escapes this test.
  const readmeCurls = shBlocks(kReadme)
    .flatMap(steps)
    .filter((s) => s.command.startsWith('curl '));
  t.ok(
    readmeCurls.every((c) => kWalkthrough.includes(c.command)),
    'no curl outside the walk-through',
  );
  // A command whose output the reader keeps (a secret read with jq) makes what later steps and snippets
  // use: written in the prose, it would never run here, so it must be one of the steps.
  for (const m of kReadme.matchAll(/`(npx flagwire [^`]*\| *jq[^`]*)`/g)) {
    t.ok(
      kSteps.some((s) => s.command.includes(m[1]!)),
      `the README's \`${m[1]}\` is run by the walk-through, not only written in its prose`,
    );
  }
  t.equal(
    realpathSync(join(kRepo, kBin)),
    realpathSync(join(kRepo, 'dist/src/cli/flagwire.cjs')),
    'npx flagwire runs the built command line',
  );
});

t.test("the README's walk-through runs as pasted, in order, and prints what it shows", async (t) => {
  // The walk-through reads JSON with jq (the README says so); Debian's package is installed when missing.
  const jq = await promisify(execFile)(kEnsureJq, ['jq']).catch((err: Error) => err);
  if (jq instanceof Error) {
    t.fail(`the walk-through needs jq, and scripts/ensure.sh jq could not install it: ${jq.message}`);
    return;
  }
  const run = await runSteps(kSteps, `${kPassword}\n`);
  const reached = run.outputs.length;
  t.equal(
    run.code,
    0,
    `bash exits 0${run.code === 0 ? '' : `; stopped in step ${reached - 1}: ${kSteps[reached - 1]?.command}\n${run.stderr}`}`,
  );
  kSteps.forEach((step, i) => {
    const output = run.outputs[i];
    t.not(output, undefined, `step ${i} ran: ${step.command.split('\n')[0]}`);
    if (output !== undefined && step.shown !== '') {
      t.ok(outputMatches(output, step.shown), `${step.command.split('\n')[0]}\n  prints: ${output}\n  shown:  ${step.shown}`);
    }
  });
  // Step 5: the password given to `flagwire user password` signs the demo owner in to the web console.
  const session = await signIn(server.baseUrl, kDemoOwner, kPassword).catch((err: Error) => err);
  t.notOk(
    session instanceof Error,
    `the web console signs in with the password set in the walk-through${session instanceof Error ? `: ${session.message}` : ''}`,
  );
});

// ---- the docs pages' credential-free examples ----------------------------------------------------

interface Example {
  file: string;
  command: string;
  /** The `# {…}` answer shown right below it, if any. */
  shown: string | undefined;
}

/** Whether a docs ```sh block calls the demo server through shell variables (run whole: scriptExamples). */
function usesVariables(block: string): boolean {
  return block.includes(kReadmeBase) && block.includes('$');
}

/** The docs' ```sh blocks that call the demo server through shell variables (an ETag kept and sent back). */
const scriptExamples = kDocs.flatMap(({ file, text }) =>
  shBlocks(text).flatMap((block) => (usesVariables(block) ? [{ file, block }] : [])),
);

/**
 * Every curl command (continuation lines joined) of the docs' ```sh blocks that calls the demo server,
 * but for the blocks that use shell variables, which run whole (below).
 */
function curlExamples(): Example[] {
  const examples: Example[] = [];
  for (const { file, text } of kDocs) {
    for (const block of shBlocks(text)) {
      if (usesVariables(block)) continue;
      for (const { command, shown } of steps(block)) {
        if (!command.startsWith('curl ') || !command.includes(kReadmeBase)) continue;
        const first = shown.split('\n')[0]!;
        examples.push({ file, command: command.replace(/\\\n\s*/g, ' '), shown: /^[[{]/.test(first) ? first : undefined });
      }
    }
  }
  return examples;
}

/** Shell words of a command: single and double quotes, no expansions (the examples use none). */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

interface Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  stream: boolean;
}

/** The curl options the examples use: -s -i -N -X -H -d; a `|` or `#` ends the command (jq, grep). */
function parseCurl(command: string): Request {
  const w = words(command);
  const req: Request = { method: 'GET', url: '', headers: {}, stream: false };
  for (let i = 1; i < w.length; i++) {
    const word = w[i]!;
    if (word === '|' || word === '#') break;
    if (word === '-X') req.method = w[++i]!;
    else if (word === '-H') {
      const [name, ...value] = w[++i]!.split(':');
      req.headers[name!.trim()] = value.join(':').trim();
    } else if (word === '-d') {
      req.body = w[++i]!;
      if (req.method === 'GET') req.method = 'POST';
    } else if (word.startsWith('-')) req.stream ||= word.includes('N');
    else req.url = word.replace(kReadmeBase, server.baseUrl);
  }
  return req;
}

const examples = curlExamples();

t.test('the docs have the examples this test is about', async (t) => {
  const urls = examples.map((e) => parseCurl(e.command).url);
  for (const path of [
    '/ofrep/v1/evaluate/flags/',
    '/ofrep/v1/evaluate/flags',
    '/v1/stream/project/prj_Demo',
    '/metrics',
    '/ready',
    '/api/v1/openapi.json',
  ]) {
    t.ok(
      urls.some((u) => u.includes(path)),
      path,
    );
  }
  t.notOk(
    examples.some((e) => /Authorization|fw_/.test(e.command)),
    'credential-free',
  );
});

for (const { file, command, shown } of examples) {
  t.test(`${file}: ${command}`, async (t) => {
    const req = parseCurl(command);
    const controller = new AbortController();
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: controller.signal });
    t.equal(res.status, 200);
    if (req.stream) {
      // A change stream: it opens, and its first event is `ready`.
      t.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('event: ready')) text += Buffer.from((await reader.read()).value!).toString();
      controller.abort();
      t.match(text, /id: \d+\nevent: ready\n/);
      return;
    }
    const text = await res.text();
    if (shown !== undefined) t.ok(outputMatches(text, shown), `answer as shown: ${text}`);
  });
}

t.test('the OFREP ETag example of docs/api.md is one of the blocks run whole', async (t) => {
  t.ok(
    scriptExamples.some(({ file, block }) => file === 'docs/api.md' && block.includes('If-None-Match')),
    'docs/api.md sends the ETag back',
  );
  t.notOk(
    scriptExamples.some(({ block }) => /Authorization|fw_/.test(block)),
    'credential-free',
  );
});

for (const { file, block } of scriptExamples) {
  const blockSteps = steps(block);
  t.test(`${file}: the block runs as pasted and prints what it shows: ${blockSteps[0]!.command.split('\n')[0]}`, async (t) => {
    const run = await runSteps(blockSteps, '');
    t.equal(run.code, 0, `bash exits 0${run.code === 0 ? '' : `\n${run.stderr}`}`);
    blockSteps.forEach((step, i) => {
      const output = run.outputs[i];
      t.not(output, undefined, `ran: ${step.command.split('\n')[0]}`);
      if (output !== undefined && step.shown !== '') {
        t.ok(outputMatches(output, step.shown), `${step.command.split('\n')[0]}\n  prints: ${output}\n  shown:  ${step.shown}`);
      }
    });
  });
}

t.test('the OpenFeature snippet of docs/api.md runs as pasted and prints what it says', async (t) => {
  const api = kDocs.find((d) => d.file === 'docs/api.md')!.text;
  const snippet = /```ts\n([\s\S]*?@openfeature\/server-sdk[\s\S]*?)```/.exec(api)![1]!;
  const expected = /console\.log\(\w+\); \/\/ (.*)/.exec(snippet)![1];
  const code = `${snippet.replaceAll(kReadmeBase, server.baseUrl)}\nawait OpenFeature.close();\n`;
  // Run from the repository root, where `import '@openfeature/…'` resolves as in a user's project.
  const { stdout } = await promisify(execFile)(...plainNode(['--input-type=module', '-e', code]), { cwd: kRepo, timeout: 60_000 });
  t.equal(stdout.trim(), expected);
});
