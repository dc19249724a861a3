// Flagwire's provider (src/provider, from source) set on the stock OpenFeature server SDK under a domain
// of its own, ready, and the SDK's client of that domain: as an application evaluates in-process.
import { type Client, OpenFeature } from '@openfeature/server-sdk';
import { FlagwireProvider, type FlagwireProviderOptions } from '../../src/provider/provider.js';

export async function providerClient(
  domain: string,
  options: FlagwireProviderOptions,
): Promise<{ provider: FlagwireProvider; client: Client }> {
  const provider = new FlagwireProvider(options);
  await OpenFeature.setProviderAndWait(domain, provider);
  return { provider, client: OpenFeature.getClient(domain) };
}
