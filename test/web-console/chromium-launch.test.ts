// How the tests start Chromium (test/helpers/web-console.ts, kChromiumLaunch): the GPU's work and the
// network service in the browser's process, with the features Playwright enables itself kept. Chromium
// reads only the last `--enable-features`, so a list of ours that left one of Playwright's out would turn
// it off without a word.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import t from 'tap';
import { kChromiumLaunch } from '../helpers/web-console.js';

/** The names in Playwright's `enabledFeatures` list (its chromiumSwitches, in the package's one bundle). */
function playwrightFeatures(): string[] {
  const root = dirname(createRequire(import.meta.url).resolve('playwright-core/package.json'));
  const source = readFileSync(join(root, 'lib/coreBundle.js'), 'utf8');
  const list = /enabledFeatures = \(\) => \[([\s\S]*?)\]\.filter/.exec(source);
  if (list === null) throw new Error("playwright-core's enabledFeatures list was not found: read its chromiumSwitches again");
  return [...list[1]!.matchAll(/^\s*(?:[^"\n]*\? "" : )?"(\w+)"/gm)].map((m) => m[1]!);
}

t.test('our --enable-features keeps every feature Playwright enables, and runs the network service in-process', async (t) => {
  const features = kChromiumLaunch.args.filter((a) => a.startsWith('--enable-features='));
  t.equal(features.length, 1, 'one --enable-features');
  const ours = features[0]!.slice('--enable-features='.length).split(',');
  const theirs = playwrightFeatures();
  t.ok(theirs.length > 0, `Playwright enables ${theirs.join(', ')}`);
  for (const name of theirs) t.ok(ours.includes(name), `${name} is kept`);
  t.ok(ours.includes('NetworkServiceInProcess2'), 'the network service runs in the browser process');
  t.ok(kChromiumLaunch.args.includes('--in-process-gpu'), "the GPU's work too");
});
