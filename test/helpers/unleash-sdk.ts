// The stock Unleash server SDK (unleash-client) on a Flagwire server, as Unleash's users start it: the
// server's `/api`, a Flagwire token as the whole Authorization header, no metrics, polling rarely.
import type { Test } from 'tap';
import { InMemStorageProvider, Unleash } from 'unleash-client';

/** The SDK with `token`, once it has its first answer; destroyed at `t`'s end. */
export async function startUnleashSdk(
  t: Pick<Test, 'teardown'>,
  baseUrl: string,
  token: string,
  appName: string,
  namePrefix?: string,
): Promise<Unleash> {
  const unleash = new Unleash({
    url: `${baseUrl}/api`,
    appName,
    namePrefix,
    customHeaders: { Authorization: token },
    disableMetrics: true,
    refreshInterval: 60_000,
    storageProvider: new InMemStorageProvider(),
  });
  t.teardown(() => unleash.destroy());
  await new Promise<void>((resolve, reject) => {
    unleash.once('synchronized', () => resolve());
    unleash.once('error', reject);
  });
  return unleash;
}
