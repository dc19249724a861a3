// The shapes of issue 42's probe of `$ref` expansion, for the tests that must refuse them quickly and
// for the largest file the limits accept (docs/operations.md, "Rules: resolved size").
//
//   l0:  {"==":[{"var":"plan"},"pro"]}
//   l1:  {"or":[{"$ref":"l0"},{"$ref":"l0"}]}       each level refers to the one below twice
//   ...
//   l20: resolves to 2^20 copies of l0: about 40 MB from a file of about 1.1 KB

/** Evaluators `l0` to `l{depth}`, each but the first referring to the level below twice. */
export function doublingEvaluators(depth: number): Record<string, unknown> {
  const evaluators: Record<string, unknown> = { l0: { '==': [{ var: 'plan' }, 'pro'] } };
  for (let level = 1; level <= depth; level++) evaluators[`l${level}`] = { or: [{ $ref: `l${level - 1}` }, { $ref: `l${level - 1}` }] };
  return evaluators;
}

/** A rule that is on when `l{depth}` holds. */
export const topRule = (depth: number) => ({ if: [{ $ref: `l${depth}` }, 'on', 'off'] });

/** The probe's Flagwire flag file (single-environment project): one flag `expanded` whose rule is `l{depth}`. */
export function probeFlagFile(depth: number): Record<string, unknown> {
  return {
    flagwire: 1,
    kind: 'single',
    $evaluators: doublingEvaluators(depth),
    flags: {
      expanded: {
        enabled: true,
        trafficPercentage: 100,
        variants: { on: true, off: false },
        defaultVariant: 'off',
        targeting: topRule(depth),
      },
    },
  };
}

/** The probe's flagd flag-definition document, for `flagwire flags import`. */
export function probeFlagdDocument(depth: number): Record<string, unknown> {
  return {
    $evaluators: doublingEvaluators(depth),
    flags: { expanded: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', targeting: topRule(depth) } },
  };
}

/**
 * About the most work a plan may be asked for, accepted: a body of 1 MB, its rules written out (flags
 * `dense-0` ...) but for one flag that refers to a 13-level chain. References add about 960 KB: the
 * chain's levels about 640 KB (14 levels would add 1.25 MiB), the flag's rule about 320 KB.
 */
export function heaviestFlagFile(): Record<string, unknown> {
  const file = probeFlagFile(13);
  const flags = { ...(file.flags as Record<string, unknown>) };
  const condition = (i: number) => ({ '==': [{ var: 'plan' }, `p${i}`] });
  let bytes = JSON.stringify(file).length;
  for (let n = 0; ; n++) {
    const flag = {
      enabled: true,
      trafficPercentage: 100,
      variants: { on: true, off: false },
      defaultVariant: 'off',
      targeting: { if: [{ or: Array.from({ length: 3000 }, (_, i) => condition(i)) }, 'on', 'off'] },
    };
    const more = JSON.stringify(flag).length + `"dense-${n}":,`.length;
    if (bytes + more > 1000 * 1000) break;
    flags[`dense-${n}`] = flag;
    bytes += more;
  }
  return { ...file, flags };
}
