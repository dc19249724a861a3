// `flagwire mcp`: the MCP server for a local assistant, over stdio (spec: Transports, stdio). It relays
// every message, as it is, to a Flagwire node's /mcp with the token, so the node alone decides what a
// tool does and what a token may do; this process holds no rule, no store and no session of its own
// beyond the one it keeps with the node.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UsageError } from '../cli/command/args.js';
import { resolveMcpRelay } from '../config.js';
import { type CliCommand, command, str } from '../cli/command/cli-command.js';
import { mcpClientHttpModule, mcpStdioModule, mcpTypes } from './sdk.js';

const kUsage = 'mcp --url URL [--token TOKEN]';

export const kMcpCli: readonly CliCommand[] = [
  command({
    name: 'mcp',
    usage: kUsage,
    summary: "serve MCP over stdio for a local assistant, relayed to a node's /mcp (FLAGWIRE_MCP=on there) as the token",
    positionals: [],
    options: {
      url: str('URL', "the node's base URL (default: $FLAGWIRE_URL)"),
      token: str(
        'TOKEN',
        'an API token of the project (default: $FLAGWIRE_TOKEN): a read token for reads only, a write token to propose changes',
      ),
    },
    notes:
      'Runs until standard input ends. Standard output carries MCP messages only; what goes wrong is said on standard error. In a guarded environment a write opens a change request that a person approves (docs/mcp.md).',
    longRunning: true,
    async run(args) {
      const { url, token } = resolveMcpRelay({ url: args.string('url'), token: args.string('token') });
      if (url === undefined || token === undefined || !URL.canParse(url))
        throw new UsageError(
          "mcp needs --url (a node's base URL, or $FLAGWIRE_URL) and --token (or $FLAGWIRE_TOKEN)",
          `Usage: flagwire ${kUsage}`,
        );
      await relay(new URL('/mcp', url), token);
      return null;
    },
    human: () => '',
  }),
];

/** Relays stdio to `endpoint` until standard input ends. */
async function relay(endpoint: URL, token: string): Promise<void> {
  const { StdioServerTransport } = mcpStdioModule();
  const { StreamableHTTPClientTransport } = mcpClientHttpModule();
  const { isInitializeRequest, isJSONRPCRequest, isJSONRPCResultResponse } = mcpTypes();
  const local = new StdioServerTransport();
  const node = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  // The node's answer to initialize names the protocol version, which every later request must carry.
  let initializeId: string | number | null = null;
  const ended = new Promise<void>((resolve) => {
    local.onclose = resolve;
  });
  node.onmessage = (message: JSONRPCMessage) => {
    if (initializeId !== null && isJSONRPCResultResponse(message) && message.id === initializeId) {
      node.setProtocolVersion(String(message.result.protocolVersion));
      initializeId = null;
    }
    void local.send(message);
  };
  node.onerror = (err) => process.stderr.write(`flagwire mcp: ${err.message}\n`);
  local.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) initializeId = message.id;
    node.send(message).catch((err: Error) => {
      // The node refused the request over HTTP (a token refused, MCP off): the assistant hears it as the request's error.
      if (isJSONRPCRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: err.message } });
      else process.stderr.write(`flagwire mcp: ${err.message}\n`);
    });
  };
  await node.start();
  await local.start();
  await ended;
  await node.close();
}
