// Console passwords' hash (src/model/passwords.ts) and the test suite's lower cost for it
// (FLAGWIRE_TEST_PASSWORD_COST, src/test-switches.ts; the runner sets it for every file): without the
// switch a hash is made at the real cost (scrypt N = 2^15, r = 8, p = 1), made so by a process that has
// no switch; with it, only N is lower; a hash names its cost, so a hash at the real cost verifies in a
// process that hashes at the lower one, and the other way round.
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { hashPassword, kPasswordCost, passwordCost, verifyPassword } from '../../src/model/passwords.js';
import { readTestSwitches } from '../../src/test-switches.js';
import { plainNode } from '../helpers/plain-process.js';

const kPassword = 'a long enough password';
const kPasswords = new URL('../../src/model/passwords.js', import.meta.url).href;

/** What `expression` (over passwords.ts' exports) comes to in a Node process with no FLAGWIRE_TEST_PASSWORD_COST. */
function withoutSwitch(expression: string): string {
  const { FLAGWIRE_TEST_PASSWORD_COST: _switch, ...env } = process.env;
  const script = `const passwords = await import(${JSON.stringify(kPasswords)}); process.stdout.write(String(await ${expression}));`;
  const [file, args] = plainNode(['--input-type=module', '-e', script]);
  return execFileSync(file, args, { env, encoding: 'utf8' });
}

t.test('the cost of a new hash: the real one unless the switch names a lower N', async (t) => {
  t.strictSame(passwordCost(readTestSwitches({})), { N: 2 ** 15, r: 8, p: 1 }, 'no switch: the real cost');
  t.strictSame(passwordCost(readTestSwitches({ FLAGWIRE_TEST_PASSWORD_COST: '10' })), { N: 2 ** 10, r: 8, p: 1 });
  t.strictSame(passwordCost(readTestSwitches({ FLAGWIRE_TEST_PASSWORD_COST: '1' })), { N: 2, r: 8, p: 1 });
  for (const value of ['', '0', '15', '16', '20', '-3', '1.5', '10 ', 'ten', '0x0a'])
    t.equal(readTestSwitches({ FLAGWIRE_TEST_PASSWORD_COST: value }).passwordCostLog2, null, `${JSON.stringify(value)} is ignored`);
});

t.test('a hash names the cost it was made with, and is checked at that cost', async (t) => {
  const { N, r, p } = kPasswordCost;
  const made = await hashPassword(kPassword);
  t.match(made, new RegExp(`^scrypt\\$${N}\\$${r}\\$${p}\\$[A-Za-z0-9+/=]+\\$[A-Za-z0-9+/=]+$`));
  t.equal(await verifyPassword(kPassword, made), true);
  t.equal(await verifyPassword('not the password at all', made), false);
  const otherN = made.replace(/^scrypt\$\d+\$/, `scrypt$${N * 2}$`);
  t.equal(await verifyPassword(kPassword, otherN), false, 'the same salt and key named with another N do not verify');
});

t.test('without the switch: hashes at the real cost; either kind verifies in a process of either cost', async (t) => {
  const real = withoutSwitch(`passwords.hashPassword(${JSON.stringify(kPassword)})`);
  t.match(real, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/, 'made at the real cost');
  t.equal(await verifyPassword(kPassword, real), true, 'a hash at the real cost verifies here');
  t.equal(await verifyPassword('not the password at all', real), false);
  const here = await hashPassword(kPassword);
  t.equal(
    withoutSwitch(`passwords.verifyPassword(${JSON.stringify(kPassword)}, ${JSON.stringify(here)})`),
    'true',
    "this process's hash verifies there",
  );
  t.equal(withoutSwitch(`passwords.verifyPassword('not the password at all', ${JSON.stringify(here)})`), 'false');
});
