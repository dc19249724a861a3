// Console passwords: the length rule (NIST SP 800-63B: a minimum length, no composition rules) and the
// memory-hard hash they are kept as (scrypt from node:crypto; argon2 would need a native dependency).
//
// Stored as `scrypt$N$r$p$<salt base64>$<key base64>`, so the cost can be raised later and old hashes
// still verify with the parameters they were made with. N = 2^15, r = 8: 32 MiB per hash, slow on purpose,
// OWASP's scrypt recommendation; hashing runs on libuv's thread pool (async), never on the event loop.
// The test suite hashes at a lower N (FLAGWIRE_TEST_PASSWORD_COST, src/test-switches.ts); a hash names
// its cost, so verifying never depends on it.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { kTestSwitches, type TestSwitches } from '../test-switches.js';

export const kMinPasswordLength = 12;
/** Long enough for any passphrase; bounds the work a sign-in request can ask for. */
export const kMaxPasswordLength = 1024;

/** scrypt's cost parameters. */
export interface PasswordCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

const kRealCost: PasswordCost = { N: 2 ** 15, r: 8, p: 1 };

/** The cost new hashes are made with: the real one, unless the test suite's switch lowers N. */
export function passwordCost(switches: Pick<TestSwitches, 'passwordCostLog2'>): PasswordCost {
  return switches.passwordCostLog2 === null ? kRealCost : { ...kRealCost, N: 2 ** switches.passwordCostLog2 };
}

/** The cost this process makes new hashes with. */
export const kPasswordCost = passwordCost(kTestSwitches);
const kKeyBytes = 32;
const kSaltBytes = 16;
/** scrypt needs 128 * N * r bytes (32 MiB at the real cost); Node's default cap is exactly that, so allow twice it. */
const kMaxMem = 2 * 128 * kRealCost.N * kRealCost.r;

/** Why `password` cannot be used, or null. Length counts characters (code points), as people do. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < kMinPasswordLength) return `the password must be at least ${kMinPasswordLength} characters long (it has ${length})`;
  if (length > kMaxPasswordLength) return `the password must be at most ${kMaxPasswordLength} characters long`;
  return null;
}

function encode(salt: Buffer, key: Buffer): string {
  return `scrypt$${kPasswordCost.N}$${kPasswordCost.r}$${kPasswordCost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

function derive(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyBytes, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(kSaltBytes);
  return encode(salt, await derive(password, salt, kKeyBytes, { ...kPasswordCost, maxmem: kMaxMem }));
}

/** Whether `stored` is a hash this module made (the writer refuses anything else). */
export function isPasswordHash(stored: string): boolean {
  return parse(stored) !== null;
}

function parse(stored: string): { N: number; r: number; p: number; salt: Buffer; key: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every(Number.isSafeInteger) || N < 2 || r < 1 || p < 1 || 128 * N * r > 16 * kMaxMem) return null;
  const salt = Buffer.from(parts[4]!, 'base64');
  const key = Buffer.from(parts[5]!, 'base64');
  return salt.length === 0 || key.length === 0 ? null : { N, r, p, salt, key };
}

/** Constant-time compare of the derived key; false for a hash this module cannot read. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (parsed === null) return false;
  const { N, r, p, salt, key } = parsed;
  const derived = await derive(password, salt, key.length, { N, r, p, maxmem: Math.max(kMaxMem, 2 * 128 * N * r) });
  return timingSafeEqual(derived, key);
}
