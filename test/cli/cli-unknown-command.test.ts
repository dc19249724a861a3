// A mistyped command is answered in a few lines naming it and the commands it is likely a mistyping of,
// not with the whole help (docs/cli.md, "Output and exit codes").
import t from 'tap';
import { cli } from '../helpers/cli.js';

t.test('a mistyped command: exit 2, its name and the nearest commands on stderr, not the whole help', async (t) => {
  const cases: [string[], RegExp][] = [
    [['flga', 'list'], /^flagwire: unknown command "flga"; did you mean "flag"\?$/m],
    [['tokn', 'list'], /unknown command "tokn"; did you mean "token"\?/],
    [['exper'], /unknown command "exper"; did you mean "experiment"\?/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(null, args, { json: false });
    const what = `flagwire ${args.join(' ')}`;
    t.equal(r.code, 2, `${what}: exit 2`);
    t.equal(r.stdout, '', `${what}: nothing on stdout`);
    t.match(r.stderr, message, `${what}: names it and the nearest command`);
    t.match(r.stderr, /"flagwire --help" lists every command/, `${what}: says where the help is`);
    t.notMatch(r.stderr, /Commands:/, `${what}: not the list of commands`);
    t.ok(r.stderr.trim().split('\n').length <= 3, `${what}: a few lines, not the help`);
  }
});

t.test('a word near no command is named without a guess; --json has the suggestion in its detail', async (t) => {
  const far = await cli(null, ['zzzzzzzz'], { json: false });
  t.equal(far.code, 2);
  t.match(far.stderr, /unknown command "zzzzzzzz"\n/);
  t.notMatch(far.stderr, /did you mean/);
  const json = await cli(null, ['flga', 'list']);
  t.equal(json.code, 2);
  t.strictSame(json.json, { error: 'Invalid request', detail: 'usage: unknown command "flga"; did you mean "flag"?' });
});
