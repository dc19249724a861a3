// The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against a started Flagwire's
// /mcp: every server scenario that applies passes. The suite needs Node 22, which npm carries as the
// package `node@22`: both are installed at test time in this test's own scratch folder, never for the
// project. The suite sends no credentials, so a proxy of this test's adds the bearer token to each
// request and passes everything else (Host and Origin included) as it came. Every scenario the suite
// lists is either run here or named below with why it does not apply: a new version's new scenario
// fails this test until it is sorted.
import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { scratchDir } from '../helpers/scratch-dir.js';
import { startWorldServer } from '../helpers/world-server.js';

/** A command's exit status and output; its standard input closed (npm waits on an open one). */
function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs: number },
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, out });
    });
  });
}
const kSuite = '@modelcontextprotocol/conformance@0.1.16';

/** The scenarios whose fixtures the reference server has and Flagwire has not (its tools, resources, completions). */
const kNotApplicable: Readonly<Record<string, string>> = {
  'logging-set-level': 'Flagwire declares no logging capability',
  'completion-complete': 'Flagwire declares no completions',
  'json-schema-2020-12': "calls the reference server's json_schema_2020_12_tool",
  'elicitation-sep1034-defaults': 'Flagwire asks nothing of the client (no elicitation)',
  'elicitation-sep1330-enums': 'Flagwire asks nothing of the client (no elicitation)',
  'server-sse-polling': '/mcp answers JSON; it opens no SSE stream (GET is 405, as the spec allows)',
  'server-sse-multiple-streams': '/mcp answers JSON; it opens no SSE stream (GET is 405, as the spec allows)',
  'prompts-get-simple': "gets the reference server's test_simple_prompt",
  'prompts-get-with-args': "gets the reference server's test_prompt_with_arguments",
  'prompts-get-embedded-resource': "gets the reference server's test_prompt_with_embedded_resource",
  'prompts-get-with-image': "gets the reference server's test_prompt_with_image",
};
const kResourceOrToolFixture = /^(tools-call-|resources-)/;

const { server, world } = await startWorldServer(t, { FLAGWIRE_MCP: 'on' });
const upstream = new URL(server.baseUrl);

// The token-adding proxy, on a loopback address as a local server's clients see it.
const proxy = createServer((req, res) => {
  const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${world.secrets.multiRead}` };
  const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
const proxyPort = (proxy.address() as { port: number }).port;

const scratch = scratchDir('flagwire-mcp-conformance-');
writeFileSync(join(scratch, 'package.json'), '{"private": true}\n');
const installed = await run('npm', ['install', '--no-audit', '--no-fund', kSuite, 'node@22'], { cwd: scratch, timeoutMs: 420_000 });
if (installed.code !== 0) throw new Error(`npm could not install ${kSuite} and node@22 in ${scratch}: ${installed.out}`);
const node22 = join(scratch, 'node_modules', 'node', 'bin', 'node');
const suite = join(scratch, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

const listed = (await run(node22, [suite, 'list', '--server'], { timeoutMs: 60_000 })).out;
const scenarios = [...listed.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1]!);
const applicable = scenarios.filter((name) => !(name in kNotApplicable) && !kResourceOrToolFixture.test(name));

// Listed before the first test: tap ends a file whose tests have all finished while it awaits.
const version = (await run(node22, ['--version'], { timeoutMs: 60_000 })).out;

t.test('Node 22 from npm runs the suite', async (t) => {
  t.match(version, /^v22\./);
});

t.test('every scenario the suite lists is run or said not to apply', async (t) => {
  t.ok(scenarios.length > 10, `the suite lists its scenarios (${scenarios.length})`);
  t.ok(applicable.includes('server-initialize') && applicable.includes('dns-rebinding-protection'), applicable.join(', '));
  for (const name of Object.keys(kNotApplicable)) t.ok(scenarios.includes(name), `${name} is still the suite's`);
});

for (const name of applicable) {
  t.test(`conformance: ${name}`, async (t) => {
    const outcome = await run(node22, [suite, 'server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--scenario', name], {
      timeoutMs: 120_000,
    });
    t.equal(outcome.code, 0, outcome.out);
    t.notMatch(outcome.out, /FAILURE|✗/, 'no check failed');
  });
}
