// FlagwireEvents' hook (src/provider/events.ts) on answers of a stock flagd provider, whose exposures are
// twin variants ending in the marker their flag metadata names (src/flags/flagd-flag.ts): an answer is
// an exposure when its variant ends in the marker, and it is sent as the variant without it; an answer
// without the marker, a marker that ends nothing, a variant without metadata naming the marker, and a
// flag without an experiment are none. The metadata key is src/model/flags.ts's, which events.ts spells
// out (it imports nothing): this test fails if the two differ.
import t from 'tap';
import { kExperimentKeyField, kExposureMarkerField } from '../../src/model/flags.js';
import { FlagwireEvents } from '../../src/provider/events.js';

interface Sent {
  kind: string;
  key: string;
  targetingKey: string;
  variant?: string;
}

function recorder(): { events: FlagwireEvents; sent: Sent[] } {
  const sent: Sent[] = [];
  const events = new FlagwireEvents({
    url: 'http://flagwire.invalid',
    clientKey: 'fwc_test',
    fetch: async (_input, init) => {
      sent.push(...(JSON.parse(String(init?.body)) as { events: Sent[] }).events);
      return new Response(JSON.stringify({ accepted: 0, duplicates: 0, rejected: [] }), { status: 200 });
    },
    onError: (err) => t.fail(err.message),
  });
  return { events, sent };
}

const metadata = (marker: string | undefined, experiment: string | null = 'exp') => ({
  id: 'flg_1',
  ...(experiment === null ? {} : { [kExperimentKeyField]: experiment }),
  ...(marker === undefined ? {} : { [kExposureMarkerField]: marker }),
});

t.test("a variant ending in the metadata's marker is an exposure, sent without the marker", async (t) => {
  const { events, sent } = recorder();
  const after = (flagKey: string, targetingKey: string, variant: string | undefined, flagMetadata: Record<string, unknown>) =>
    events.hook.after({ flagKey, context: { targetingKey } }, { variant, flagMetadata });
  after('checkout', 'u1', 'on~', metadata('~'));
  after('checkout', 'u1', 'on~', metadata('~'));
  after('checkout', 'u2', 'off~', metadata('~'));
  after('colour', 'u3', 'a~~1', metadata('~1'));
  after('colour', 'u4', 'a~', metadata('~1'));
  after('checkout', 'u5', 'on', metadata('~'));
  after('checkout', 'u6', 'on~', metadata(undefined));
  after('checkout', 'u7', 'on~', metadata('~', null));
  after('checkout', 'u8', undefined, metadata('~'));
  after('checkout', 'u9', 'on', metadata(''));
  after('checkout', '', 'on~', metadata('~'));
  await events.close();
  t.same(
    sent.map(({ kind, key, targetingKey, variant }) => ({ kind, key, targetingKey, variant })),
    [
      { kind: 'exposure', key: 'checkout', targetingKey: 'u1', variant: 'on' },
      { kind: 'exposure', key: 'checkout', targetingKey: 'u2', variant: 'off' },
      { kind: 'exposure', key: 'colour', targetingKey: 'u3', variant: 'a~' },
    ],
    'once per subject; a user variant "a~" under the marker "~1" is none; no marker, no experiment, no variant, no subject: none',
  );
});

t.test('inExperiment still decides an OFREP answer, whatever its variant', async (t) => {
  const { events, sent } = recorder();
  events.hook.after(
    { flagKey: 'f', context: { targetingKey: 'u1' } },
    { variant: 'x~', flagMetadata: { experimentKey: 'e', inExperiment: true } },
  );
  events.hook.after(
    { flagKey: 'f', context: { targetingKey: 'u2' } },
    { variant: 'on', flagMetadata: { experimentKey: 'e', inExperiment: false } },
  );
  await events.close();
  t.same(
    sent.map((e) => [e.targetingKey, e.variant]),
    [['u1', 'x~']],
  );
});
