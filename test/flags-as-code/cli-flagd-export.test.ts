// `flagwire export --format flagd` as users run it (the rest of flags as code on the command line:
// cli.test.ts): one environment's flags in flagd's format, named and refused as a usage error without
// one in a multi-environment project; what flagd cannot express left out and named with why; the same
// bytes for the same state; flagd's own parser loads it; a flag's name is data, whatever JavaScript
// makes of it as a property name.
import t from 'tap';
import { parseFlagDefinition } from '../../src/targeting/parse.js';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { colourId, dataDir, exportText, ids, kColours, kRule } from './cli-world.js';

t.test("export --format flagd: one environment, what flagd can't express named, and flagd's parser loads it", async (t) => {
  await expectAllRefused(t, dataDir, [
    [
      ['export', ids.multi, '--format', 'flagd', '--json'],
      { error: 'Invalid request', detail: /multi-environment project and flagd's format has none: name the environment to export \(--env/ },
    ],
    [['export', ids.multi, '--format', 'flagd', '--env', 'qa', '--json'], { error: 'Invalid request', detail: /Unknown environment "qa"/ }],
    [
      ['export', ids.multi, '--env', 'staging', '--json'],
      { error: 'Invalid request', detail: /Flagwire's format holds every environment: drop it/ },
    ],
  ]);
  const yaml = await cli(dataDir, ['export', ids.multi, '--format', 'yaml'], { json: false });
  t.equal(yaml.code, 2);
  t.match(yaml.stderr, /--format must be flagwire or flagd, not "yaml"/);

  const text = await exportText(ids.multi, '--format', 'flagd', '--env', 'staging');
  t.equal(await exportText(ids.multi, '--format', 'flagd', '--env', 'staging'), text, 'the same bytes again');
  const doc = JSON.parse(text);
  t.equal(doc.$schema, 'https://flagd.dev/schema/v0/flags.json');
  // Each flag as the sync service's flag set says it (src/flags/flagd-flag.ts); what flagd cannot say is
  // left out and named with the reason the flag sets give.
  const meta = (name: string) => ({ id: name === 'colour' ? colourId : ids.groupFlag, name });
  t.strictSame(Object.keys(doc.flags), ['colour', 'limit', 'search']);
  t.strictSame(
    doc.flags.colour,
    { state: 'ENABLED', variants: kColours, defaultVariant: 'red', targeting: kRule, metadata: meta('colour') },
    'everyone in: exact',
  );
  t.strictSame(
    doc.flags.search,
    { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on', metadata: meta('search') },
    'a boolean flag on for everyone',
  );
  t.strictSame(Object.keys(doc['x-flagwire-omitted']), ['half']);
  t.match(
    doc['x-flagwire-omitted'].half,
    /modulo bucketing, which flagd's fractional cannot reproduce/,
    'a modulo split is left out, and why',
  );
  const parsed = parseFlagDefinition(text);
  t.ok(parsed.ok, `flagd's parser loads it: ${parsed.ok ? '' : JSON.stringify(parsed.problems)}`);
  if (parsed.ok) t.strictSame(Object.keys(parsed.definition.flags).sort(), ['colour', 'limit', 'search']);

  const production = JSON.parse(await exportText(ids.multi, '--format', 'flagd', '--env', 'production'));
  t.strictSame(production.flags.colour, { state: 'DISABLED', variants: kColours, defaultVariant: 'blue', metadata: meta('colour') });
  t.ok(parseFlagDefinition(production).ok);
  const single = JSON.parse(await exportText(ids.single, '--format', 'flagd'));
  t.notOk(Object.hasOwn(single.flags, 'checkout'), 'a modulo split: left out');
  t.match(single['x-flagwire-omitted'], { checkout: /turns on for 50% of callers by design §2's modulo bucketing/ });
  t.ok(parseFlagDefinition(single).ok, 'a single project: no --env');

  // A flag's name is data, whatever JavaScript makes of it as a property name.
  await ok(t, dataDir, ['flag', 'create', ids.single, '--name', '__proto__', '--enabled', '--percentage', '100', '--json']);
  const flagd = JSON.parse(await exportText(ids.single, '--format', 'flagd'));
  t.ok(Object.hasOwn(flagd.flags, '__proto__'), 'flagd: a flag named __proto__ is exported');
  t.strictSame(Object.getOwnPropertyDescriptor(flagd.flags, '__proto__')?.value, {
    state: 'ENABLED',
    variants: { on: true, off: false },
    defaultVariant: 'on',
    metadata: { id: Object.getOwnPropertyDescriptor(flagd.flags, '__proto__')?.value.metadata.id, name: '__proto__' },
  });
  const flagwire = JSON.parse(await exportText(ids.single));
  t.strictSame(Object.keys(flagwire.flags), ['__proto__', 'banner', 'checkout'], "Flagwire's format too, in code-point order");
});
