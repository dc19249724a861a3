// The experiment plan the experiments' tests make (issue 59), as the Management API's create body.
/**
 * An experiment's create body on `flagId` (a boolean flag): off (the control) against on at 50/50, a
 * conversion (the primary) and a mean, for `plannedSubjects` subjects.
 */
export function experimentPlan(flagId: string, plannedSubjects: number) {
  return {
    key: 'checkout-2026',
    flagId,
    variants: [
      { variant: 'off', weight: 50 },
      { variant: 'on', weight: 50 },
    ],
    control: 'off',
    metrics: [
      { metric: 'purchase', kind: 'conversion' as const },
      { metric: 'revenue', kind: 'mean' as const },
    ],
    primaryMetric: 'purchase',
    plannedSubjects,
  };
}
