// MCP's settings (src/config.ts): off unless FLAGWIRE_MCP=on; its bounds and origins read once and
// checked, a bad one refused naming its variable.
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { scratchDir } from '../helpers/scratch-dir.js';

const env = (more: Record<string, string>) => ({ FLAGWIRE_DATA: scratchDir('flagwire-mcp-settings-'), ...more });

t.test('off unless on; on, its defaults', async (t) => {
  t.equal(loadConfig({}, env({})).mcp, null);
  t.equal(loadConfig({}, env({ FLAGWIRE_MCP: 'off' })).mcp, null);
  t.strictSame(loadConfig({}, env({ FLAGWIRE_MCP: 'on' })).mcp, { sessionMaxAgeMs: 86_400_000, origins: [] });
  const set = loadConfig(
    {},
    env({
      FLAGWIRE_MCP: 'on',
      FLAGWIRE_MCP_SESSION_SECONDS: '60',
      FLAGWIRE_MCP_ORIGINS: 'https://tools.example.com, http://10.0.0.5:3000',
    }),
  ).mcp;
  t.strictSame(set, { sessionMaxAgeMs: 60_000, origins: ['https://tools.example.com', 'http://10.0.0.5:3000'] });
});

t.test('a bad value is refused naming its variable', async (t) => {
  const refused = (more: Record<string, string>, setting: string) => {
    let thrown: unknown = null;
    try {
      loadConfig({}, env(more));
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof ConfigError && thrown.setting === setting, `${setting}: ${String(thrown)}`);
  };
  refused({ FLAGWIRE_MCP: 'yes' }, 'FLAGWIRE_MCP');
  refused({ FLAGWIRE_MCP: 'on', FLAGWIRE_MCP_SESSION_SECONDS: '0' }, 'FLAGWIRE_MCP_SESSION_SECONDS');
  refused({ FLAGWIRE_MCP: 'on', FLAGWIRE_MCP_SESSION_SECONDS: 'an hour' }, 'FLAGWIRE_MCP_SESSION_SECONDS');
  refused({ FLAGWIRE_MCP: 'on', FLAGWIRE_MCP_ORIGINS: 'https://tools.example.com/path' }, 'FLAGWIRE_MCP_ORIGINS');
});
