// The stock Unleash server SDK (unleash-client) on a server's client API, as an application starts it:
// once it has its first answer; destroyed at `t`'s end. What Flagwire's Unleash tests compare against.
import { InMemStorageProvider, Unleash } from 'unleash-client';

/** `url`: the SDK's `url` (the server's address and `/api`); `token`: what it sends as Authorization. */
export async function startUnleashSdk(
  t: { teardown(fn: () => void): void },
  url: string,
  token: string,
  appName: string,
  namePrefix?: string,
): Promise<Unleash> {
  const unleash = new Unleash({
    url,
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

/** The names of the features the SDK was given, sorted. */
export function sdkFeatureNames(unleash: Unleash): string[] {
  return (unleash.getFeatureToggleDefinitions() ?? []).map((f) => f.name).sort();
}
