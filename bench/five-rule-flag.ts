// The five-rule targeting tree the benches measure (issue 25, item 6): sem_ver, in, starts_with,
// ends_with with and, and fractional by an attribute. targeting.bench.ts and in-process.bench.ts time
// it in one process; the wrk bench serves it as scenario (n) (dataset.ts stores the flag, scenarios.ts
// asks it).
export const kFiveRuleTargeting = {
  if: [
    { sem_ver: [{ var: 'version' }, '<', '2.0.0'] },
    'legacy',
    { in: [{ var: 'country' }, ['NL', 'DE', 'BE', 'FR', 'LU']] },
    'eu',
    { starts_with: [{ var: 'email' }, 'admin@'] },
    'staff',
    { and: [{ ends_with: [{ var: 'email' }, '@faas.com'] }, { '==': [{ var: 'tier' }, 'gold'] }] },
    'partner',
    { fractional: [{ var: 'userId' }, ['control', 50], ['treatment', 50]] },
  ],
};

export const kFiveRuleVariants = { legacy: 'L', eu: 'E', staff: 'S', partner: 'P', control: 'C', treatment: 'T' };

/** The contexts the in-process benches cycle through (an OpenFeature evaluation context each): together they reach every branch. */
export function fiveRuleContexts(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    targetingKey: `user-${i}`,
    userId: `user-${i}-7f3c2a9e`,
    version: ['1.4.2', '2.0.0', '2.3.1', 'v3.0.0'][i % 4]!,
    country: ['NL', 'US', 'DE', 'JP', 'BR'][i % 5]!,
    email: [`admin@corp.com`, `u${i}@faas.com`, `u${i}@example.com`][i % 3]!,
    tier: i % 2 === 0 ? 'gold' : 'free',
  }));
}
