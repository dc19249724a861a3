// The stock MCP client SDK connected to a test server's MCP: over Streamable HTTP at /mcp, or over stdio
// through `flagwire mcp` (which relays to the same /mcp), as a token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { kCli } from '../helpers/server.js';
import { plainNode } from '../helpers/plain-process.js';

export type McpTransportKind = 'http' | 'stdio';

export const kTransports: readonly McpTransportKind[] = ['http', 'stdio'];

/** A connected client; closed at teardown. */
export async function mcpClient(
  t: { teardown(fn: () => Promise<unknown>): void },
  kind: McpTransportKind,
  baseUrl: string,
  token: string,
): Promise<Client> {
  const client = new Client({ name: 'flagwire-test', version: '1.0.0' });
  if (kind === 'http') {
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
  } else {
    const [command, args] = plainNode([kCli, 'mcp', '--url', baseUrl]);
    const env = Object.fromEntries(Object.entries({ ...process.env, FLAGWIRE_TOKEN: token }).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    await client.connect(new StdioClientTransport({ command, args, env, stderr: 'inherit' }));
  }
  t.teardown(() => client.close());
  return client;
}

/** A tool's answer; its structuredContent as plain data. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult & { structuredContent?: any }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: any };
}
