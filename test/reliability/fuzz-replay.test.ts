// A fuzz run is replayed from its seed (fuzz-management.test.ts prints FLAGWIRE_FUZZ_SEED on a failure):
// the generated requests, bytes and all, are the same every time a seed is drawn from. Names drew a
// random id and the duplicated Authorization header Math.random(), so a replay sent other requests; this
// file failed on both.
import fc from 'fast-check';
import t from 'tap';
import { managementRequests, wireRequest, type WireContext } from '../helpers/fuzz-requests.js';

const kData = {
  flagIds: ['flg_a', 'flg_b'],
  flagNames: ['alpha', 'beta'],
  audienceIds: ['aud_a'],
  writeSecrets: ['fw_write_a', 'fw_write_b'],
  otherSecrets: ['fw_read_a'],
  write: 'fw_write_a',
  read: 'fw_read_a',
};
const kContext: WireContext = {
  port: 8080,
  readSecret: 'fw_read_a',
  flagIds: kData.flagIds,
  projectOf: new Map([
    ['fw_write_a', 'prj_a'],
    ['fw_write_b', 'prj_b'],
  ]),
  ownFlags: new Map([
    ['fw_write_a', ['flg_a']],
    ['fw_write_b', ['flg_b']],
  ]),
  projectEnvs: new Map([
    ['prj_a', ['staging', 'production']],
    ['prj_b', ['production']],
  ]),
};

/** The raw requests a seed makes, as their bytes. */
const requestsOf = (seed: number): string[] =>
  fc.sample(managementRequests(kData), { seed, numRuns: 30 }).map((r) => wireRequest(r, kContext).bytes.toString('latin1'));

t.test('a seed makes the same requests every time', async (t) => {
  const first = requestsOf(13);
  t.strictSame(requestsOf(13), first, 'the same 30 requests, byte for byte');
  t.notSame(requestsOf(14), first, 'another seed, other requests');
  const generated = fc.sample(managementRequests(kData), { seed: 13, numRuns: 30 });
  t.ok(
    generated.some((r) => r.duplicateAuth),
    'some requests carry a second Authorization header',
  );
  t.ok(
    first.some((bytes) => /"name":"[^"]*-[0-9a-f]{8}"/.test(bytes)),
    'some bodies name a flag with its generated suffix',
  );
});
