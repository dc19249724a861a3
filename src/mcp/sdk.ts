// The stock MCP TypeScript SDK, loaded the first time MCP is used: its modules take a large share of
// a thread's start (bench/RESULTS.md, MCP SDK load), and a node without FLAGWIRE_MCP, or any command
// but `flagwire mcp`, never needs them.
import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/server/stdio.js';
import type * as ClientHttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import { loadOnUse } from '../load-on-use.js';

export const mcpServerModule = loadOnUse<typeof ServerModule>('@modelcontextprotocol/sdk/server/index.js');
export const mcpHttpModule = loadOnUse<typeof HttpModule>('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js');
export const mcpStdioModule = loadOnUse<typeof StdioModule>('@modelcontextprotocol/sdk/server/stdio.js');
export const mcpClientHttpModule = loadOnUse<typeof ClientHttpModule>('@modelcontextprotocol/sdk/client/streamableHttp.js');
export const mcpTypes = loadOnUse<typeof TypesModule>('@modelcontextprotocol/sdk/types.js');
