// One MCP session's protocol server (the stock SDK's low-level Server): its tools and prompts listed
// from their declarations (tools.ts, prompts.ts) and each call run as the token of the HTTP request
// that carries it, which the transport hands over as its auth info (service-routes.ts).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, GetPromptResult, ListPromptsResult, ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../model/records/token-access.js';
import { kMcpPrompts } from './prompts.js';
import type { RouteAnswer, RouteCallDeps } from './route-call.js';
import { mcpServerModule, mcpTypes } from './sdk.js';
import { kMcpTools, type McpTool } from './tools.js';

/** What the tools run with, and where a change request's console page is. */
export interface McpServerDeps extends RouteCallDeps {
  readonly config: RouteCallDeps['config'] & { readonly baseUrl: string };
}

/** The key of the HTTP request's AuthContext in the transport's auth info (`extra`). */
export const kAuthKey = 'flagwire';

const kInstructions =
  "Flagwire's feature flags for the project of your token: read flags with their lifecycle stage, evaluate and explain them for a context, create flags (always off), change a rollout, schedule a change, read experiments, find stale flags and their code references, and follow change requests. Every write runs with the Management API's rules: a read-only token is refused it, and in a guarded environment it is not applied but held as a change request that a person approves; the tool answers with the request and its console link.";

const kToolsByName: ReadonlyMap<string, McpTool> = new Map(kMcpTools.map((tool) => [tool.name, tool]));

const kToolList: ListToolsResult = {
  tools: kMcpTools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: { title: tool.title, readOnlyHint: !tool.writes, destructiveHint: false, openWorldHint: false },
  })),
};

const kPromptList: ListPromptsResult = {
  prompts: kMcpPrompts.map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: [...args] })),
};

export function mcpServer(deps: McpServerDeps, version: string): Server {
  const { Server } = mcpServerModule();
  const { CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError } =
    mcpTypes();
  const server = new Server(
    { name: 'flagwire', title: 'Flagwire', version },
    { capabilities: { tools: {}, prompts: {} }, instructions: kInstructions },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => kToolList);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = kToolsByName.get(request.params.name);
    if (tool === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}; tools/list names every tool.`);
    const auth = extra.authInfo?.extra?.[kAuthKey] as AuthContext | undefined;
    if (auth === undefined) throw new McpError(ErrorCode.InternalError, 'The request carried no token.');
    return toolResult(await tool.run(request.params.arguments ?? {}, auth, deps), deps.config.baseUrl);
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => kPromptList);
  server.setRequestHandler(GetPromptRequestSchema, (request): GetPromptResult => {
    const prompt = kMcpPrompts.find((p) => p.name === request.params.name);
    if (prompt === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}; prompts/list names every prompt.`);
    const args = request.params.arguments ?? {};
    const missing = prompt.arguments.filter((a) => a.required && (args[a.name] ?? '') === '').map((a) => a.name);
    if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `Missing argument: ${missing.join(', ')}.`);
    return {
      description: prompt.description,
      messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }],
    };
  });
  return server;
}

/** A tool's answer as MCP's result: the value as JSON text and structured; a change request with its console link; a refusal, the envelope, as an error. */
export function toolResult(answer: RouteAnswer, baseUrl: string): CallToolResult {
  if (answer.kind === 'refused') {
    const { value } = answer;
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: { ...value } };
  }
  if (answer.kind === 'requested') {
    const { changeRequest, edited, detail } = answer.value;
    const link = `${baseUrl}/console#/requests/${encodeURIComponent(changeRequest.id)}`;
    const text = `Not applied: ${detail}. A person approves or rejects it at ${link} (or with \`flagwire request approve\`); nothing changes until then.`;
    return { content: [{ type: 'text', text }], structuredContent: { changeRequest, edited, detail, link } };
  }
  const { value } = answer;
  const structured =
    typeof value === 'object' && value !== null && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
  return { content: [{ type: 'text', text: JSON.stringify(value) }], ...structured };
}
