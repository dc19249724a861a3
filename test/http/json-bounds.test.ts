// The JSON bounds (src/http/json-bounds.ts): depth and elements counted outside strings, string escapes
// honoured, exact at the limits, and the same whether the text comes as a string, as bytes, or in parts.
import t, { type Test } from 'tap';
import {
  JsonBounds,
  jsonBoundsProblem,
  jsonBoundsRefusal,
  kMaxJsonDepth,
  kMaxJsonElements,
  kTooDeep,
  kTooManyElements,
  tooDeepPath,
} from '../../src/http/json-bounds.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** An object nested `depth` deep: {"a":{"a":...{}}}. */
const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
/** `n` copies of `item`, comma-separated. */
const many = (item: string, n: number) => Array(n).fill(item).join(',');
/** An array of `n` elements in all (the array and n - 1 zeros). */
const wide = (n: number) => `[${many('0', n - 1)}]`;

/** The problem for `text` as a string, as bytes, and fed in parts of every size up to 7 bytes: all the same. */
function problemOf(t: Test, text: string): string | null {
  const asText = jsonBoundsProblem(text);
  const bytes = new TextEncoder().encode(text);
  t.equal(jsonBoundsProblem(bytes), asText, 'bytes read as the string');
  if (text.length < 2000) {
    for (let size = 1; size <= 7; size++) {
      const bounds = new JsonBounds();
      for (let i = 0; i < bytes.length; i += size) bounds.scanBytes(bytes.subarray(i, i + size));
      t.equal(bounds.problem, asText, `in parts of ${size} bytes`);
    }
  }
  return asText;
}

t.test('depth: arrays and objects alike, exact at the limit', async (t) => {
  t.equal(kMaxJsonDepth, 128);
  t.equal(problemOf(t, nested(kMaxJsonDepth)), null);
  t.equal(problemOf(t, nested(kMaxJsonDepth + 1)), kTooDeep);
  t.equal(problemOf(t, objects(kMaxJsonDepth)), null);
  t.equal(problemOf(t, objects(kMaxJsonDepth + 1)), kTooDeep);
  t.equal(problemOf(t, `{"a":[{"b":${nested(kMaxJsonDepth - 3)}}]}`), null, 'mixed, at the limit');
  t.equal(problemOf(t, `{"a":[{"b":${nested(kMaxJsonDepth - 2)}}]}`), kTooDeep, 'mixed, one past it');
  // Depth is how deep, not how many: siblings at the limit do not add up.
  t.equal(problemOf(t, `[${many(nested(kMaxJsonDepth - 1), 100)}]`), null);
  t.equal(problemOf(t, ' \t\r\n[ [ ] ]\n'), null, 'whitespace is nothing');
  t.match(kTooDeep, /deeper than 128 levels/);
});

t.test('brackets inside strings are text: escapes honoured', async (t) => {
  const deepText = '['.repeat(1000) + '{'.repeat(1000);
  t.equal(problemOf(t, JSON.stringify({ a: deepText })), null, 'a string of brackets');
  t.equal(problemOf(t, JSON.stringify({ [deepText]: 1 })), null, 'a key of brackets');
  // An escaped quote does not end the string: the brackets after it are still text.
  t.equal(problemOf(t, `["\\"${'['.repeat(100)}"]`), null, 'after \\"');
  // An escaped backslash does: the quote after it ends the string, and what follows is structure.
  t.equal(problemOf(t, `["\\\\", ${nested(kMaxJsonDepth)}]`), kTooDeep, 'after \\\\ the string ends');
  t.equal(problemOf(t, `["\\\\\\"${'['.repeat(100)}"]`), null, '\\\\\\" is a backslash and a quote, still text');
  t.equal(problemOf(t, `["\\u005b\\u005d", ${nested(kMaxJsonDepth - 1)}]`), null, '\\u escapes are text');
  t.equal(problemOf(t, JSON.stringify({ 'é[': 'ü{' })), null, 'text beyond ASCII');
  // A byte at a time: the escape's state carries from one part to the next.
  const bounds = new JsonBounds();
  for (const part of ['["', '\\', '"', '['.repeat(200), '"]']) bounds.scanText(part);
  t.equal(bounds.problem, null, 'an escape split across parts');
});

t.test('elements: values and keys, exact at the limit', async (t) => {
  t.equal(kMaxJsonElements, 262_144);
  t.equal(problemOf(t, wide(kMaxJsonElements)), null);
  t.equal(problemOf(t, wide(kMaxJsonElements + 1)), kTooManyElements);
  // Each key and each value is one: the array, the object, and 2 per member.
  const members = (n: number) => `[{${Array.from({ length: n }, (_, i) => `"k${i}":null`).join(',')}}`;
  const half = (kMaxJsonElements - 2) / 2;
  t.equal(problemOf(t, `${members(half)}]`), null, 'keys and values, at the limit');
  t.equal(problemOf(t, `${members(half)},1]`), kTooManyElements, 'one more, past it');
  // A number, true, false or null is one however long; a string too.
  t.equal(problemOf(t, `[${many(' -12.5e+3 ', kMaxJsonElements - 1)}]`), null);
  t.equal(problemOf(t, `[${many('true', kMaxJsonElements - 1)}, ""]`), kTooManyElements);
  t.equal(problemOf(t, `[${many('"a,b:c"', kMaxJsonElements - 1)}]`), null, 'commas in strings count nothing');
  t.equal(problemOf(t, `[${many('"a,b:c"', kMaxJsonElements)}]`), kTooManyElements, 'one string more, past it');
  t.match(kTooManyElements, /more than 262144 JSON elements/);
});

t.test('a scan stops at the bound and stays refused until reset', async (t) => {
  const bounds = new JsonBounds();
  t.equal(bounds.scanText(nested(kMaxJsonDepth + 1)), false);
  t.equal(bounds.scanText('1'), false, 'refused still');
  t.equal(bounds.problem, kTooDeep);
  t.equal(bounds.reset().scanText('[1]'), true);
  t.equal(bounds.problem, null);
  // Text that is not JSON is JSON.parse's to refuse: closing more than was opened does not buy depth.
  t.equal(jsonBoundsProblem(`]]]]${nested(kMaxJsonDepth + 1)}`), kTooDeep);
});

t.test('a refusal for depth names where the bound is passed: keys and indices, the first eight', async (t) => {
  const deep = (n: number) => `${'{"!":['.repeat(n)}1${']}'.repeat(n)}`;
  const text = `{"a":1,"flags":{"x\\"y":{"targeting":{"if":[true,${deep(100)}]}}}}`;
  const problem = jsonBoundsProblem(text);
  t.equal(problem, kTooDeep);
  t.equal(tooDeepPath(text), 'flags.x\\"y.targeting.if.1.!.0.!…', 'an escaped quote stays in its key; the second item of "if"');
  t.equal(
    jsonBoundsRefusal(text, problem!),
    `The request body nests arrays and objects deeper than ${kMaxJsonDepth} levels at flags.x\\"y.targeting.if.1.!.0.!…; send it flatter.`,
  );
  t.equal(
    jsonBoundsRefusal(nested(kMaxJsonDepth + 1), kTooDeep),
    `The request body nests arrays and objects deeper than ${kMaxJsonDepth} levels at 0.0.0.0.0.0.0.0…; send it flatter.`,
  );
  t.equal(jsonBoundsRefusal('x', kTooManyElements), kTooManyElements, 'the element bound is told as it is');
});

t.test('a text too short to pass either bound as JSON is not scanned', async (t) => {
  // 2 × 128 characters: the most a value nested 128 deep takes; one more level needs 258.
  t.equal(jsonBoundsProblem(nested(kMaxJsonDepth)), null);
  t.equal(jsonBoundsProblem(nested(kMaxJsonDepth + 1)), kTooDeep, 'the shortest text past the depth is scanned');
  // Not JSON, and short: passed here; JSON.parse refuses it, having built nothing deeper than its length.
  t.equal(jsonBoundsProblem('['.repeat(2 * kMaxJsonDepth)), null);
  t.throws(() => JSON.parse('['.repeat(2 * kMaxJsonDepth)));
});
