// An application as the OpenFeature Operator configures it for in-process evaluation: the stock flagd
// provider (@openfeature/flagd-provider) created with no options reads everything from the FLAGD_*
// variables the operator injected. Run as a process of its own (test/helpers/operator-convergence.ts),
// so that the environment is the only configuration it has. It prints "ready" once its provider is,
// then the boolean flag named by its argument each time its value changes ("true" or "false"), and
// exits when its stdin closes.
import { FlagdProvider } from '@openfeature/flagd-provider';
import { OpenFeature, ProviderEvents } from '@openfeature/server-sdk';

const flag = process.argv[2];
if (flag === undefined) throw new Error('usage: env-flagd-provider.js FLAG');

const client = OpenFeature.getClient();
let ready = false;
let last: boolean | null = null;

async function report(): Promise<void> {
  if (!ready) return;
  const value = await client.getBooleanValue(flag!, false, { targetingKey: 'operator' });
  if (value === last) return;
  last = value;
  process.stdout.write(`${value}\n`);
}

// A first connection that misses the provider's deadline on a loaded machine is retried by the provider
// itself, which then emits Ready: waiting for the event, not for setProviderAndWait, rides that out.
client.addHandler(ProviderEvents.Ready, () => {
  if (!ready) process.stdout.write('ready\n');
  ready = true;
  void report();
});
client.addHandler(ProviderEvents.ConfigurationChanged, () => void report());
client.addHandler(ProviderEvents.Error, (details) => process.stderr.write(`provider error: ${details?.message ?? ''}\n`));
OpenFeature.setProvider(new FlagdProvider());

process.stdin.resume();
process.stdin.on('end', () => {
  void OpenFeature.close().then(() => process.exit(0));
});
