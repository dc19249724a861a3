// What FlagwireEvents' hook costs an application per evaluation (issue 58): the stock OpenFeature server
// SDK evaluating a boolean flag whose answers are exposures, through a provider that answers at once
// (so the SDK and the hook are all that is measured), without the hook and with it, in alternating
// rounds in one process. Two cases: the same 1,000 subjects again and again (the hook finds each pair
// already sent), and a new subject each time (the hook queues an exposure; a full batch is handed to a
// fetch that answers at once). CPU ns per evaluation, median of the rounds.
// Run: npm run build && node dist/bench/events-hook.bench.js [--rounds 7] [--evaluations 200000]
import { parseArgs } from 'node:util';
import { type JsonValue, OpenFeature, type Provider, type ResolutionDetails } from '@openfeature/server-sdk';
import { FlagwireEvents } from '../src/provider/events.js';
import { machineInfo } from './environment.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, evaluations: { type: 'string', default: '200000' } } });
const kRounds = Number(values.rounds);
const kEvaluations = Number(values.evaluations);

const answer: ResolutionDetails<boolean> = {
  value: true,
  variant: 'on',
  reason: 'SPLIT',
  flagMetadata: { id: 'flg_1', name: 'new-checkout', experimentKey: 'checkout-2026', inExperiment: true },
};
const provider: Provider = {
  metadata: { name: 'answers-at-once' },
  resolveBooleanEvaluation: async () => answer,
  resolveStringEvaluation: async () => ({ value: '' }),
  resolveNumberEvaluation: async () => ({ value: 0 }),
  resolveObjectEvaluation: async <T extends JsonValue>(_flagKey: string, defaultValue: T) => ({ value: defaultValue }),
};
await OpenFeature.setProviderAndWait(provider);
const plain = OpenFeature.getClient('plain');
const hooked = OpenFeature.getClient('hooked');
const ok = new Response('{"accepted":1000,"duplicates":0,"rejected":[]}', { status: 200 });
const events = new FlagwireEvents({
  url: 'http://127.0.0.1:9',
  clientKey: 'fwc_bench',
  rememberExposures: 100_000,
  fetch: async () => ok.clone(),
});
hooked.addHooks(events.hook);

const contexts = (fresh: boolean, round: number) =>
  Array.from({ length: kEvaluations }, (_, i) => ({ targetingKey: fresh ? `r${round}-u${i}` : `u${i % 1000}` }));

async function timed(client: typeof plain, ctx: { targetingKey: string }[]): Promise<number> {
  const start = process.cpuUsage();
  for (const c of ctx) await client.getBooleanValue('new-checkout', false, c);
  await events.flush();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / ctx.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`# ${JSON.stringify(machineInfo())}; ${kRounds} rounds of ${kEvaluations} evaluations each`);
console.log('| case | without the hook: CPU ns / evaluation | with it | difference |');
console.log('|---|---:|---:|---:|');
for (const fresh of [false, true]) {
  const without: number[] = [];
  const withHook: number[] = [];
  for (let round = 0; round < kRounds; round++) {
    const ctx = contexts(fresh, round);
    // Alternated, so a busy moment of the machine falls on both alike.
    if (round % 2 === 0) {
      without.push(await timed(plain, ctx));
      withHook.push(await timed(hooked, ctx));
    } else {
      withHook.push(await timed(hooked, ctx));
      without.push(await timed(plain, ctx));
    }
  }
  const [a, b] = [median(without), median(withHook)];
  console.log(
    `| ${fresh ? 'a new subject each time' : '1,000 returning subjects'} | ${a.toFixed(0)} | ${b.toFixed(0)} | +${(b - a).toFixed(0)} |`,
  );
}
await events.close();
await OpenFeature.close();
