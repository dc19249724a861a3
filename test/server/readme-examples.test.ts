// The README's credential-free examples, taken from README.md itself and run against a fresh
// `serve --demo` (an empty data dir, as `npm start` on a new checkout): every `curl` line aimed at
// 127.0.0.1:8080 in a ```sh block, and the OpenFeature snippet. So the examples cannot drift from what a
// new user gets: the demo projects' fixed ids, flag names as OFREP keys, the answers shown.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { startTestServer } from '../helpers/server.js';

const kRepo = fileURLToPath(new URL('../../../', import.meta.url));
const kReadme = readFileSync(`${kRepo}README.md`, 'utf8');
const kReadmeBase = 'http://127.0.0.1:8080';

const server = await startTestServer({ demo: true });
t.teardown(async () => {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
});

interface Example {
  command: string;
  /** The `# {…}` answer shown right below it, if any. */
  shown: unknown;
}

/** Every curl command (continuation lines joined) of the ```sh blocks that calls the server. */
function curlExamples(): Example[] {
  const examples: Example[] = [];
  for (const block of kReadme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1]!.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith('curl ') || !lines[i]!.includes(kReadmeBase)) continue;
      let command = lines[i]!;
      while (command.endsWith('\\')) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
      const next = lines[i + 1] ?? '';
      let shown: unknown;
      if (next.startsWith('# {')) shown = JSON.parse(next.slice(2));
      examples.push({ command, shown });
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

/** The curl options the examples use: -s -i -N -X -H -d; a `|` ends the command (jq, grep). */
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

/** Equal, where a shown string with "…" in it stands for any value. */
function matchesShown(actual: unknown, shown: unknown): boolean {
  if (typeof shown === 'string' && shown.includes('…')) return true;
  if (shown === null || typeof shown !== 'object') return actual === shown;
  if (actual === null || typeof actual !== 'object') return false;
  const a = actual as Record<string, unknown>;
  const s = shown as Record<string, unknown>;
  return Object.keys(s).length === Object.keys(a).length && Object.keys(s).every((k) => matchesShown(a[k], s[k]));
}

const examples = curlExamples();

t.test('the README has the examples this test is about', async (t) => {
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
    'credential-free only',
  );
});

for (const { command, shown } of examples) {
  t.test(command, async (t) => {
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
    if (shown !== undefined) t.ok(matchesShown(JSON.parse(text), shown), `answer as shown: ${text}`);
  });
}

t.test('the OpenFeature snippet runs as pasted and prints what it says', async (t) => {
  const snippet = /```ts\n([\s\S]*?@openfeature\/server-sdk[\s\S]*?)```/.exec(kReadme)![1]!;
  const expected = /console\.log\(\w+\); \/\/ (.*)/.exec(snippet)![1];
  const code = `${snippet.replaceAll(kReadmeBase, server.baseUrl)}\nawait OpenFeature.close();\n`;
  // Run from the repository root, where `import '@openfeature/…'` resolves as in a user's project.
  const { NODE_OPTIONS: _tapLoader, ...env } = process.env;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: kRepo, env, timeout: 30_000 });
  t.equal(stdout.trim(), expected);
});
