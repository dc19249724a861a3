// A record's changed fields (src/store/record-patch.ts), what the change log keeps of a record written
// again: applied to the version before, they give back the record as written, its fields in their order
// (so it encodes to the same bytes), and their size follows what changed. Generated records, changed at
// random, prove it over shapes no example list would think of.
import { Packr } from 'msgpackr';
import t from 'tap';
import { patchedRecord, recordChanges } from '../../src/store/record-patch.js';
import { random } from '../helpers/seeded-random.js';

const packr = new Packr({ useRecords: false });

const kKeys = ['a', 'b', 'c', '10', '2', '__proto__', 'constructor', 'enabled', 'rules'];

function value(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 6 : 8));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return Math.floor(next() * 100) - 50;
    case 3:
      return 'x'.repeat(Math.floor(next() * 5));
    case 4:
      return undefined;
    case 5:
      return next() * 3;
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (const key of kKeys)
        if (next() < 0.4)
          Object.defineProperty(out, key, { value: value(next, depth + 1), enumerable: true, writable: true, configurable: true });
      return out;
    }
  }
}

/** `record` changed here and there: fields set, removed, added, arrays grown, values retyped. */
function changed(next: () => number, record: unknown, depth = 0): unknown {
  if (next() < 0.15) return value(next, depth);
  if (Array.isArray(record)) {
    const out = record.map((item) => (next() < 0.3 ? changed(next, item, depth + 1) : item));
    if (next() < 0.2) out.push(value(next, depth + 1));
    return out;
  }
  if (typeof record === 'object' && record !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(record)) {
      if (next() < 0.1) continue;
      Object.defineProperty(out, key, {
        value: next() < 0.3 ? changed(next, item, depth + 1) : item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    for (const key of kKeys)
      if (!Object.hasOwn(out, key) && next() < 0.1)
        Object.defineProperty(out, key, { value: value(next, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return record;
}

t.test('applied to the version before, the changes give back the record as written, byte for byte', async (t) => {
  let patched = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const next = random(seed);
    const before = { id: 'flg_1', ...(value(next, 0) as object) };
    const after = changed(next, before);
    const frozen = packr.pack(before);
    const changes = recordChanges(before, after);
    if (changes === null) continue;
    patched++;
    const result = patchedRecord(before, changes);
    if (Buffer.compare(packr.pack(result), packr.pack(after)) !== 0) {
      t.fail(`seed ${seed}: ${JSON.stringify(after)} came back as ${JSON.stringify(result)}`);
      return;
    }
    if (Buffer.compare(packr.pack(before), frozen) !== 0) {
      t.fail(`seed ${seed}: the version before was changed`);
      return;
    }
  }
  t.ok(patched > 2000, `${patched} of 3000 generated records were kept as their changes, each rebuilt exactly`);
});

t.test('their size follows what changed, not the record', async (t) => {
  const big = {
    id: 'flg_1',
    name: 'big',
    variants: { big: 'x'.repeat(100_000), small: 'y' },
    environments: { production: { enabled: false } },
  };
  const after = { ...big, environments: { production: { enabled: true } }, updatedAt: 5 };
  const changes = recordChanges(big, after)!;
  t.strictSame(changes, {
    unset: [],
    set: [
      [['environments', 'production', 'enabled'], true],
      [['updatedAt'], 5],
    ],
  });
  t.ok(packr.pack(changes).length < 100, 'a few dozen bytes for a 100 KB record');
  t.equal(recordChanges(big, { ...big }) !== null && recordChanges(big, { ...big })!.set.length, 0, 'nothing changed: nothing to set');
  t.equal(recordChanges(big, 'another value'), null, 'another value altogether is kept whole');
  const reordered = { name: big.name, id: big.id, variants: big.variants, environments: big.environments };
  t.equal(recordChanges(big, reordered), null, 'its fields in another order: kept whole, so a copy keeps the order');
  const inner = { ...big, variants: { small: 'y', big: big.variants.big } };
  t.strictSame(recordChanges(big, inner), { unset: [], set: [[['variants'], inner.variants]] }, 'likewise an inner object');
  // A list rewritten item by item (a large fragment's new rule, issue 96): as changes, each item with its
  // path, it weighs more than the whole record; kept whole instead, as soon as that is clear.
  const list = (k: number) => ({
    projectId: 'prj_1',
    rule: { in: [{ var: 'plan' }, Array.from({ length: 5000 }, (_, i) => `p${k}-${i}`)] },
  });
  t.equal(recordChanges(list(0), list(1)), null, 'most of it changed: kept whole');
  const few = list(0);
  few.rule.in[1] = (few.rule.in[1] as string[]).map((item, i) => (i < 10 ? `changed-${i}` : item));
  t.equal(recordChanges(list(0), few)?.set.length, 10, 'a few items changed: those items');
});
