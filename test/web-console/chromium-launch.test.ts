// How the tests start Chromium (test/helpers/web-console.ts, kChromiumLaunch): the GPU's work and the
// network service in the browser's process, with the features Playwright enables itself kept. Chromium
// reads only the last `--enable-features`, so a list of ours that left one of Playwright's out would turn
// it off without a word. Read from the command line Playwright itself builds: its launch is pointed at a
// stand-in executable that writes down its arguments and exits, so the test needs no Chromium and reads
// no Playwright source.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { playwright } from '../helpers/playwright.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { kChromiumLaunch } from '../helpers/web-console.js';

/** The arguments Playwright starts Chromium with, given kChromiumLaunch. */
async function launchArguments(dir: string): Promise<string[]> {
  const written = join(dir, 'argv');
  const standIn = join(dir, 'chromium');
  // One argument a line (none of Playwright's holds a newline), then an exit: the launch fails at once.
  writeFileSync(standIn, `#!/bin/sh\nprintf '%s\\n' "$@" > '${written}'\nexit 1\n`);
  chmodSync(standIn, 0o755);
  // The bound only catches a hang: the stand-in exits at once, and Playwright reports that.
  await playwright()
    .chromium.launch({ ...kChromiumLaunch, executablePath: standIn, timeout: 60_000 })
    .then(
      (browser) => browser.close().then(() => Promise.reject(new Error('the stand-in cannot be a browser'))),
      () => undefined,
    );
  return readFileSync(written, 'utf8').split('\n').slice(0, -1);
}

t.test('our --enable-features keeps every feature Playwright enables, and runs the network service in-process', async (t) => {
  const argv = await launchArguments(tempDir(t));
  for (const arg of kChromiumLaunch.args) t.ok(argv.includes(arg), `${arg} is passed`);
  const lists = argv.filter((a) => a.startsWith('--enable-features=')).map((a) => a.slice('--enable-features='.length).split(','));
  const ours = lists.at(-1) ?? [];
  t.same(
    `--enable-features=${ours.join(',')}`,
    kChromiumLaunch.args.find((a) => a.startsWith('--enable-features=')),
    'ours is the last, which Chromium reads',
  );
  const theirs = lists.slice(0, -1).flat();
  t.ok(theirs.length > 0, `Playwright enables ${theirs.join(', ')}`);
  for (const name of theirs) t.ok(ours.includes(name), `${name} is kept`);
  t.ok(ours.includes('NetworkServiceInProcess2'), 'the network service runs in the browser process');
  t.ok(argv.includes('--in-process-gpu'), "the GPU's work too");
});
