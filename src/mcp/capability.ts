// MCP as a capability (docs/mcp.md): Flagwire's Model Context Protocol server, for coding assistants.
// Its tools run the Management API's routes as the caller's token (tools.ts), so every write is the
// API's write: refused to a read token, and held as a change request in a guarded environment. Served
// at /mcp over Streamable HTTP when FLAGWIRE_MCP is on (service-routes.ts), and over stdio by
// `flagwire mcp`, which relays to a node's /mcp (cli.ts). It stores nothing.
import { defineCapability } from '../capability/capability.js';

export const kMcp = defineCapability({
  name: 'mcp',
  serviceRoutes: async () => (await import('./service-routes.js')).kMcpRoutes,
  cli: async () => (await import('./cli.js')).kMcpCli,
});
