// A demo server for the console's endpoints' tests: its owner and a viewer of its organisation, each
// signed in to the console.
import { cli } from './cli.js';
import { startTestServer } from './server.js';
import { demoPassword, kDemoOwner, setPassword, signIn } from './web-console.js';

/** The console's endpoints' test setup: a demo server, its owner and a viewer of its organisation signed in. */
export async function demoWithViewer(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const viewerId = (await cli(dir, ['user', 'create', '--email', 'viewer@demo.flagwire.test'])).json.id as string;
  await cli(dir, ['org', 'add-member', orgId, viewerId, '--role', 'viewer']);
  // A throw, not an assertion: a caller may run this before its first test, after which tap ends on its own.
  if ((await setPassword(dir, viewerId, 'viewer password 123\n')).code !== 0) throw new Error('the viewer got no password');
  const viewer = await signIn(base, 'viewer@demo.flagwire.test', 'viewer password 123');
  return { server, base, dir, orgId, owner, viewer };
}
