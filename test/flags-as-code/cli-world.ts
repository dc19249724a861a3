// The world of the command line's flags-as-code tests (cli.test.ts, cli-flagd-export.test.ts): a data
// dir holding the world's projects, and beside its multi project's group flag a typed flag, a numeric one
// and a 50% flag for its audience; and an export of a project as the command line prints it.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { FlagCreate } from '../../src/model/schemas.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

export const kColours = { red: '#f00', blue: '#00f' };
export const kRule = { if: [{ '==': [{ var: 'plan' }, 'x'] }, 'blue'] };

// The world's multi project (Platform: audience Beta, group flag "search" with a flag-wide cohort list
// and an override in production), and beside it a typed flag, a numeric one and a 50% flag for Beta.
export const dataDir = tempDir(t);
const world = buildWorld(dataDir);
export const { ids } = world;
const create = (projectId: string, body: FlagCreate) => world.run('flagCreate', { projectId, body, principal: kOperator });
export const colourId = create(ids.multi, {
  name: 'colour',
  environments: {
    staging: { enabled: true, trafficPercentage: 100, variants: kColours, defaultVariant: 'red', targeting: kRule },
    production: { variants: kColours, defaultVariant: 'blue' },
  },
}).id;
create(ids.multi, {
  name: 'half',
  environments: { staging: { enabled: true, trafficPercentage: 50, audienceId: ids.multiAudience } },
});
create(ids.multi, {
  name: 'limit',
  environments: { staging: { enabled: true, trafficPercentage: 100, variants: { low: 10, high: 1000 }, defaultVariant: 'low' } },
});
await world.store.close();

export const exportText = async (project: string, ...args: string[]) => {
  const r = await cli(dataDir, ['export', project, ...args], { json: false });
  t.equal(r.code, 0, `export ${project} ${args.join(' ')}: exit 0 ${r.stderr}`);
  return r.stdout;
};
