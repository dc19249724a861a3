// The MCP server (src/mcp; docs/mcp.md) through the stock MCP client SDK, over both transports (Streamable
// HTTP at /mcp, and stdio through `flagwire mcp`): its tools and prompts listed, input schemas valid JSON
// Schema 2020-12; a read token refused every write tool in the Management API's envelope; a write to a
// guarded environment opens a change request, applies nothing, and applies once a person approves; a
// request commented on and withdrawn; a created flag is off; every refusal is the API's own envelope.
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { callTool, kTransports, mcpClient } from './mcp-client.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_MCP: 'on' });
const { ids, secrets } = world;
const base = server.baseUrl;
// A second Admin approves: the write token is the Owner's, and an author may not approve its own change.
const reviewer = world.run('userCreate', { email: 'reviewer@a.test' }).id;
world.run('orgAddMember', { principal: kOperator, orgId: ids.orgA, userId: reviewer, role: 'admin' });

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}
await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--as', ids.admin]);

const kWriteTools = ['create_flag', 'change_flag', 'start_rollout', 'schedule_change', 'comment_change_request', 'withdraw_change_request'];
const kReadTools = [
  'list_flags',
  'get_flag',
  'evaluate_flags',
  'list_experiments',
  'get_experiment_results',
  'find_stale_flags',
  'find_code_refs',
  'list_change_requests',
  'get_change_request',
];

/** The flag as the Management API reads it in production: its version (ETag) and state. */
async function production(flagId: string) {
  const r = await call(base, 'GET', `/api/v1/flags/${flagId}?env=production`, { token: secrets.multiRead });
  return { etag: r.headers.get('etag'), enabled: r.json.enabled as boolean };
}

t.test('tools and prompts are listed, each tool input schema valid JSON Schema 2020-12', async (t) => {
  const client = await mcpClient(t, 'http', base, secrets.multiRead);
  const { tools } = await client.listTools();
  t.strictSame(tools.map((tool) => tool.name).sort(), [...kWriteTools, ...kReadTools].sort());
  const ajv = new Ajv2020.default({ strict: false });
  for (const tool of tools) {
    t.ok(ajv.validateSchema(tool.inputSchema), `${tool.name}: ${ajv.errorsText(ajv.errors)}`);
    t.doesNotThrow(() => ajv.compile(tool.inputSchema), `${tool.name} compiles`);
    t.equal(tool.annotations?.readOnlyHint, !kWriteTools.includes(tool.name), `${tool.name}: readOnlyHint`);
  }
  const create = tools.find((tool) => tool.name === 'create_flag')!;
  t.notOk('enabled' in ((create.inputSchema.properties as any).body.properties as object), 'create_flag takes no enabled');
  const { prompts } = await client.listPrompts();
  t.strictSame(
    prompts.map((p) => p.name),
    ['wrap_change_in_flag', 'clean_up_flag', 'read_experiment'],
  );
  for (const prompt of prompts) {
    const args = Object.fromEntries((prompt.arguments ?? []).filter((a) => a.required).map((a) => [a.name, 'checkout']));
    const got = await client.getPrompt({ name: prompt.name, arguments: args });
    const text = (got.messages[0]!.content as { text: string }).text;
    t.match(text, /change request/, `${prompt.name} says what Flagwire will not apply`);
  }
  const cleanup = await client.getPrompt({ name: 'clean_up_flag', arguments: { flag: 'checkout', keep: 'on' } });
  t.match((cleanup.messages[0]!.content as { text: string }).text, /flagwire refs cleanup/);
});

for (const kind of kTransports) {
  t.test(`${kind}: a read token reads, and is refused every write tool in the API's envelope`, async (t) => {
    const client = await mcpClient(t, kind, base, secrets.multiRead);
    const listed = await callTool(client, 'list_flags');
    t.notOk(listed.isError);
    t.ok(
      listed.structuredContent.flags.some((f: any) => f.id === ids.groupFlag && typeof f.stage === 'string'),
      'flags with their stage',
    );
    const got = await callTool(client, 'get_flag', { flag_id: ids.groupFlag, env: 'production' });
    t.match(got.structuredContent, { flag: { id: ids.groupFlag }, lifecycle: { stage: String } });
    const explained = await callTool(client, 'evaluate_flags', { env: 'production', cohort: 'qa', targetingKey: 'u1' });
    t.notOk(explained.isError, JSON.stringify(explained.content));
    t.ok(
      explained.structuredContent.results.some((r: any) => r.id === ids.groupFlag && typeof r.because === 'string'),
      'why, per flag',
    );
    const api = await call(base, 'POST', '/api/v1/flags', { token: secrets.multiRead, body: { name: 'refused' } });
    t.equal(api.status, 403);
    for (const name of kWriteTools) {
      const r = await callTool(client, name, { flag_id: ids.groupFlag, request_id: 'chr_none', env: 'production', body: { name: 'x' } });
      t.equal(r.isError, true, `${name} refused`);
      t.strictSame(r.structuredContent, api.json, `${name}: the Management API's own envelope`);
      t.strictSame(JSON.parse((r.content[0] as { text: string }).text), api.json, `${name}: the envelope as text too`);
    }
  });

  t.test(`${kind}: a guarded write opens a change request, moves nothing, applies once a person approves`, async (t) => {
    const client = await mcpClient(t, kind, base, secrets.multiWrite);
    const created = await callTool(client, 'create_flag', { body: { name: `mcp-${kind}`, environments: { staging: { enabled: true } } } });
    t.notOk(created.isError, JSON.stringify(created.content));
    const flagId = created.structuredContent.id as string;
    t.match(created.structuredContent.environments, { staging: { enabled: false } }, 'created off, whatever was asked');
    const before = await production(flagId);
    t.equal(before.enabled, false);
    const held = await callTool(client, 'change_flag', { flag_id: flagId, env: 'production', body: { enabled: true } });
    t.notOk(held.isError);
    const request = held.structuredContent.changeRequest;
    t.match(request, { id: /^chr_/, status: 'pending', environments: ['production'] });
    t.equal(held.structuredContent.link, `${base}/console#/requests/${request.id}`, 'its console page');
    t.match((held.content[0] as { text: string }).text, /^Not applied: .*approves or rejects it at http/);
    t.strictSame(await production(flagId), before, 'the flag is as it was: same version, still off');
    const shown = await callTool(client, 'get_change_request', { request_id: request.id });
    t.match(shown.structuredContent, { id: request.id, status: 'pending' });
    const seen = await ok(['request', 'show', request.id]);
    const approved = await cli(server.dataDir, ['request', 'approve', request.id, '--version', String(seen.version), '--as', reviewer]);
    t.equal(approved.code, 0, approved.stderr);
    const after = await production(flagId);
    t.equal(after.enabled, true, 'applied once a person approved');
    t.not(after.etag, before.etag);
  });

  t.test(`${kind}: a change request commented on and withdrawn through tools`, async (t) => {
    const client = await mcpClient(t, kind, base, secrets.multiWrite);
    const held = await callTool(client, 'change_flag', { flag_id: ids.groupFlag, env: 'production', body: { trafficPercentage: 40 } });
    const id = held.structuredContent.changeRequest.id as string;
    const commented = await callTool(client, 'comment_change_request', { request_id: id, body: { text: `from ${kind}` } });
    t.notOk(commented.isError, JSON.stringify(commented.content));
    const withdrawn = await callTool(client, 'withdraw_change_request', { request_id: id });
    t.notOk(withdrawn.isError, JSON.stringify(withdrawn.content));
    const api = await call(base, 'GET', `/api/v1/change-requests/${id}`, { token: secrets.multiRead });
    t.equal(api.json.status, 'withdrawn');
    t.ok(JSON.stringify(api.json).includes(`from ${kind}`), 'the comment is on the request');
  });
}

t.test("every tool's refusal is the Management API's envelope for the same call", async (t) => {
  const client = await mcpClient(t, 'http', base, secrets.multiWrite);
  const cases: [string, Record<string, unknown>, string, string, unknown?][] = [
    ['get_flag', { flag_id: 'flg_nope' }, 'GET', '/api/v1/flags/flg_nope'],
    [
      'change_flag',
      { flag_id: ids.groupFlag, env: 'nowhere', body: { enabled: true } },
      'PATCH',
      `/api/v1/flags/${ids.groupFlag}?env=nowhere`,
      { enabled: true },
    ],
    ['create_flag', { body: { name: '' } }, 'POST', '/api/v1/flags', { name: '', enabled: false }],
    ['get_change_request', { request_id: 'chr_nope' }, 'GET', '/api/v1/change-requests/chr_nope'],
    ['find_code_refs', {}, 'GET', '/api/v1/code-refs'],
    ['list_flags', { stage: 'rotten' }, 'GET', '/api/v1/lifecycle?stage=rotten'],
  ];
  for (const [name, args, method, path, body] of cases) {
    const r = await callTool(client, name, args);
    const api = await call(base, method, path, { token: secrets.multiWrite, body });
    t.ok(api.status >= 400 && api.status < 500, `${method} ${path}: ${api.status}`);
    t.equal(r.isError, true, `${name} refused`);
    t.strictSame(r.structuredContent, api.json, `${name}: ${api.json.error}`);
  }
  const evaluated = await callTool(client, 'evaluate_flags', {});
  t.equal(evaluated.isError, true, 'a multi-environment project needs env');
  t.strictSame(Object.keys(evaluated.structuredContent).sort(), ['detail', 'docs', 'error']);
  const staging = await mcpClient(t, 'http', base, secrets.stagingWrite);
  const denied = await callTool(staging, 'evaluate_flags', { env: 'production' });
  t.equal(denied.structuredContent.error, 'Environment not permitted');
});
