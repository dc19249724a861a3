// FlagwireEvents in a real Chromium page (issue 58, item 3): the stock OpenFeature web SDK with the
// stock OFREP web provider, bundled with the events module as an application bundles them, served from
// its own origin; the hook alone sends each subject's exposure once, whatever the page evaluates, and the
// server counts each subject once in the variant the page got.
import t from 'tap';
import { launchChromium } from '../helpers/web-console.js';
import { startExperimentServer } from '../helpers/experiment-server.js';
import { servedSdkPage } from '../helpers/sdk-page.js';

const { base, world, clientKey, statistics } = await startExperimentServer(t);
const { ids } = world;

// The application's bundle: what a page built with a bundler runs.
const appUrl = await servedSdkPage(
  t,
  `
      import { OpenFeature } from '@openfeature/web-sdk';
      import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
      import { FlagwireEvents } from './dist/src/provider/events.js';
      window.evaluateAll = async ({ base, project, clientKey, subjects }) => {
        const events = new FlagwireEvents({ url: base, clientKey });
        OpenFeature.addHooks(events.hook);
        await OpenFeature.setContext({ targetingKey: subjects[0] });
        await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl: base, headers: [['X-Flagwire-Project', project]] }));
        const client = OpenFeature.getClient();
        const variants = {};
        for (const subject of subjects) {
          await OpenFeature.setContext({ targetingKey: subject });
          for (let i = 0; i < 3; i++) variants[subject] = client.getBooleanDetails('new-checkout', false).variant;
        }
        await events.close();
        return variants;
      };`,
);

t.test("a page's evaluations send each subject's exposure once, counted in the variant the page got", async (t) => {
  const browser = await launchChromium(t);
  const tab = await browser.newPage();
  const sent: { kind: string; targetingKey: string; variant?: string }[] = [];
  tab.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/ofrep/v1/events')) sent.push(...request.postDataJSON().events);
  });
  await tab.goto(appUrl);
  const subjects = Array.from({ length: 12 }, (_, i) => `visitor-${i}`);
  const variants = (await tab.evaluate(
    (args) => (window as unknown as { evaluateAll: (a: unknown) => Promise<unknown> }).evaluateAll(args),
    { base, project: ids.single, clientKey, subjects },
  )) as Record<string, string>;
  t.strictSame(Object.keys(variants).sort(), [...subjects].sort(), 'every subject evaluated');
  t.strictSame(
    sent.map((e) => `${e.kind} ${e.targetingKey} ${e.variant}`).sort(),
    subjects.map((s) => `exposure ${s} ${variants[s]}`).sort(),
    'one exposure per subject, with the variant the page got',
  );
  const stats = await statistics();
  const expected: Record<string, number> = {};
  for (const variant of Object.values(variants)) expected[variant] = (expected[variant] ?? 0) + 1;
  t.strictSame(Object.fromEntries(stats.variants.map((v: { variant: string; subjects: number }) => [v.variant, v.subjects])), expected);
});
