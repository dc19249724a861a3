// The audit log's sentence writer (src/words/audit-sentences.ts): one sentence per changed
// field, the field in words, flags, audiences and people by their names with their ids kept, values read
// as a reader reads them (on/off, N%, a time, a list), a thing made or removed, anything else written out
// field by field (times in it as times) for the page to fold; an entry that lists no change reads as its action.
import t from 'tap';
import {
  askedSentences,
  auditSentences,
  namesOf,
  type Part,
  partsText,
  patchSentences,
  requestTitle,
} from '../../src/words/audit-sentences.js';
import type { AuditView } from '../../src/web-console/browser/views.js';

const kAt = Date.UTC(2026, 2, 3, 4, 5, 6);
const names = namesOf({
  flags: [{ id: 'flg_1', name: 'Checkout' }],
  audiences: [{ id: 'aud_1', name: 'Beta users' }],
  people: [{ ref: 'user:usr_b', name: 'Bea' }],
});

function entry(changes: Record<string, { before: unknown; after: unknown }>, over: Partial<AuditView['entries'][number]> = {}) {
  return {
    seq: 1,
    at: kAt,
    projectId: 'p1',
    actor: 'user:usr_a',
    actorName: 'Ann',
    action: 'flag.patch',
    flagId: 'flg_1',
    env: 'production',
    changes,
    ...over,
  };
}

/** A sentence as text: a named thing as `name [id]`, a time as `@ms`, a list or record as `<its text>`. */
function read(parts: Part[]): string {
  return parts
    .map((p) => (typeof p === 'string' ? p : 'id' in p ? `${p.name} [${p.id}]` : 'at' in p ? `@${p.at}` : `<${p.text}>`))
    .join('');
}
const sentences = (e: ReturnType<typeof entry>) => auditSentences(e, names).map(read);

t.test("a flag's state: one sentence per field, the flag and the environment by name", async (t) => {
  t.same(
    sentences(
      entry({
        enabled: { before: false, after: true },
        trafficPercentage: { before: 10, after: 50 },
        audienceId: { before: null, after: 'aud_1' },
        cohorts: { before: ['a'], after: [] },
      }),
    ),
    [
      'Changed the state of flag Checkout [flg_1] in production from off to on.',
      'Changed the traffic percentage of flag Checkout [flg_1] in production from 10% to 50%.',
      'Changed the audience of flag Checkout [flg_1] in production from everyone (no audience) to Beta users [aud_1].',
      'Changed the cohorts of flag Checkout [flg_1] in production from a to none.',
    ],
  );
});

t.test('set and cleared fields; things made and removed; a person a key names; a time', async (t) => {
  t.same(
    sentences(
      entry(
        {
          defaultVariant: { before: null, after: 'on' },
          metadata: { before: { team: 'web' }, after: null },
          token: { before: { id: 'tok_1', name: 'ci-deploy' }, after: null },
          audience: { before: null, after: { id: 'aud_2', name: 'EU' } },
          'role of user:usr_b': { before: 'viewer', after: 'editor' },
          graceEndsAt: { before: kAt, after: kAt + 1000 },
        },
        { flagId: null, env: null, action: 'token.revoke' },
      ),
    ),
    [
      'Set the default variant to on.',
      'Cleared the metadata (was <{team: web}>).',
      'Removed token ci-deploy [tok_1].',
      'Made audience EU [aud_2].',
      'Changed the role of Bea [user:usr_b] from viewer to editor.',
      `Changed the old secret's end from @${kAt} to @${kAt + 1000}.`,
    ],
  );
});

t.test('an unknown flag or audience stays its id; a rule reads field by field; no change reads as the action', async (t) => {
  const rule = { if: [{ in: [{ var: 'email' }, ['a@b.test']] }, 'on', 'off'] };
  t.same(
    sentences(
      entry(
        { targeting: { before: null, after: rule }, audienceId: { before: 'aud_gone', after: null } },
        { flagId: 'flg_gone', env: null },
      ),
    ),
    [
      'Set the rule of flag flg_gone to <{if: [{in: [{var: email}, a@b.test]}, on, off]}>.',
      'Changed the audience of flag flg_gone from aud_gone to everyone (no audience).',
    ],
  );
  t.same(sentences(entry({}, { action: 'flag.delete', env: null })), ['flag.delete of flag Checkout [flg_1].']);
  t.same(
    sentences(entry({ flag: { before: null, after: { name: 'checkout-v2' } } }, { action: 'flag.create', env: null })),
    ['Made flag checkout-v2 [flg_1].'],
    'a flag made: by the name it was made with, once',
  );
  t.same(sentences(entry({ flag: { before: { name: 'old' }, after: null } }, { action: 'flag.delete', env: null })), [
    'Removed flag old [flg_1].',
  ]);
});

t.test('inside a record, a time is a time and a named thing its name; its text says them so', async (t) => {
  const [sentence] = auditSentences(
    entry({ schedule: { before: null, after: { id: 'sch_1', at: kAt, patch: { cohorts: ['a', 'b'] } } } }, { action: 'schedule.create' }),
    names,
  );
  const value = sentence!.find((p) => typeof p === 'object' && 'value' in p) as { value: Part[]; text: string };
  t.same(
    value.value.filter((p) => typeof p === 'object'),
    [{ at: kAt }],
    'the time a part of its own',
  );
  t.equal(value.text, '{id: sch_1, at: 2026-03-03 04:05:06 UTC, patch: {cohorts: a, b}}');
});

t.test("a scheduled change's patch as sentences, one per field, in the log's words", async (t) => {
  const text = (patch: Record<string, unknown>) => patchSentences(patch, names).map((parts) => partsText(parts));
  t.same(text({ enabled: true, trafficPercentage: 50, audienceId: 'aud_1' }), [
    'Set the state to on.',
    'Set the traffic percentage to 50%.',
    'Set the audience to Beta users.',
  ]);
  t.same(text({ audienceId: null, cohorts: ['qa', 'beta'], defaultVariant: 'big' }), [
    'Set the audience to everyone (no audience).',
    'Set the cohorts to qa, beta.',
    'Set the default variant to big.',
  ]);
  t.same(text({ targeting: { if: [{ $ref: 'paying' }, 'big', null] } }), ['Set the rule to {if: [{$ref: paying}, big, none]}.']);
});

t.test('a shared fragment made, changed and removed: by its name, its rule written out (folded when long)', async (t) => {
  const rule = { '==': [{ var: 'plan' }, 'pro'] };
  const change = (before: unknown, after: unknown, action: string) =>
    sentences(entry({ 'fragments.paying': { before, after } }, { action, flagId: null, env: null }));
  t.same(change(null, rule, 'fragment.create'), ['Made shared fragment paying <{==: [{var: plan}, pro]}>.']);
  t.same(change(rule, { '==': [{ var: 'plan' }, 'team'] }, 'fragment.update'), [
    'Changed shared fragment paying from <{==: [{var: plan}, pro]}> to <{==: [{var: plan}, team]}>.',
  ]);
  t.same(change(rule, null, 'fragment.delete'), ['Removed shared fragment paying <{==: [{var: plan}, pro]}>.']);
});

t.test("a change asked for (a change request's title): orders in the log's words, short", async (t) => {
  const asked = (e: ReturnType<typeof entry>) => askedSentences(e, names).map(read);
  t.same(
    asked(
      entry({
        enabled: { before: false, after: true },
        trafficPercentage: { before: 10, after: 50 },
        audienceId: { before: null, after: 'aud_1' },
        targeting: { before: null, after: { if: [true, 'on', 'off'] } },
        defaultVariant: { before: 'a', after: null },
      }),
    ),
    [
      'Turn on Checkout [flg_1] in production.',
      'Set the traffic percentage of flag Checkout [flg_1] in production to 50%.',
      'Set the audience of flag Checkout [flg_1] in production to Beta users [aud_1].',
      'Set the rule of flag Checkout [flg_1] in production.',
      'Clear the default variant of flag Checkout [flg_1] in production.',
    ],
  );
  t.same(asked(entry({ enabled: { before: true, after: false } })), ['Turn off Checkout [flg_1] in production.']);
  t.same(asked(entry({ flag: { before: null, after: { name: 'Checkout' } } }, { env: null })), ['Make flag Checkout [flg_1].']);
  t.same(asked(entry({ schedule: { before: null, after: { id: 'sch_1', at: kAt, patch: { enabled: true } } } })), [
    `Schedule a change of flag Checkout [flg_1] in production for @${kAt}.`,
  ]);
  t.same(asked(entry({ rollout: { before: 'paused', after: 'rollback' } })), [
    'Roll back the rollout of flag Checkout [flg_1] in production.',
  ]);
  t.same(asked(entry({ 'fragments.beta': { before: null, after: { in: [] } } }, { flagId: null, env: null })), [
    'Make shared fragment beta.',
  ]);
  t.equal(
    requestTitle([entry({ enabled: { before: false, after: true } }), entry({ trafficPercentage: { before: 0, after: 5 } })], names),
    'Turn on Checkout in production; Set the traffic percentage of flag Checkout in production to 5%',
  );
  const many = [1, 2, 3, 4].map((n) => entry({ trafficPercentage: { before: 0, after: n } }));
  t.equal(
    requestTitle(many, names),
    'Set the traffic percentage of flag Checkout in production to 1%; Set the traffic percentage of flag Checkout in production to 2%; and 2 more changes',
  );
});
