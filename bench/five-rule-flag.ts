// The five-rule targeting tree the benches measure (issue 25, item 6): sem_ver, in, starts_with,
// ends_with with and, and fractional by an attribute. targeting.bench.ts times it in one process;
// the wrk bench serves it as scenario (n) (dataset.ts stores the flag, scenarios.ts asks it).
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
