// The Evaluation API query string: cohort, env, targetingKey and attributes; decoding and its 400s.
import t from 'tap';
import { EvalQuery } from '../../../src/evaluation/engine/query.js';

const parse = (raw: string) => {
  const q = new EvalQuery();
  const ok = q.parse(raw);
  return { ok, q };
};

t.test('the three named parameters; every other one is an attribute', async (t) => {
  const { ok, q } = parse('cohort=alice&env=production&targetingKey=user-1&plan=beta&country=NL');
  t.equal(ok, true);
  t.equal(q.cohort, 'alice');
  t.equal(q.env, 'production');
  t.equal(q.targetingKey, 'user-1');
  t.equal(q.attribute('plan'), 'beta');
  t.equal(q.attribute('country'), 'NL');
  t.equal(q.attribute('cohort'), undefined, 'cohort is never an attribute');
  t.equal(q.attribute('env'), undefined, 'env is never an attribute');
  t.equal(q.attribute('targetingKey'), undefined, 'targetingKey is never an attribute');
  t.equal(q.attribute('missing'), undefined);
});

t.test('empty query, empty values and parameters without "="', async (t) => {
  const empty = parse('');
  t.equal(empty.ok, true);
  t.same([empty.q.cohort, empty.q.env, empty.q.targetingKey], [null, null, null]);
  const { q } = parse('cohort=&targetingKey=&env=&flag&plan=&&');
  t.same([q.cohort, q.env, q.targetingKey], [null, null, null], 'empty means absent');
  t.equal(q.attribute('flag'), '');
  t.equal(q.attribute('plan'), '');
});

t.test('percent-decoding and "+" as a space (form encoding)', async (t) => {
  const { q } = parse('cohort=bob%2Btag%40example.com&targetingKey=two+words&team=R%26D&city=M%C3%BCnchen&%70lan=b%65ta');
  t.equal(q.cohort, 'bob+tag@example.com');
  t.equal(q.targetingKey, 'two words');
  t.equal(q.attribute('team'), 'R&D');
  t.equal(q.attribute('city'), 'München');
  t.equal(q.attribute('plan'), 'beta', 'names are decoded too');
  t.equal(parse('cohort=a=b').q.cohort, 'a=b', 'only the first "=" separates');
});

t.test('a literal "+" in cohort is refused (spec: the usual cause of the cohort 400); elsewhere it is a space', async (t) => {
  for (const raw of ['cohort=bob+beta@example.com', 'cohort=+', 'plan=x&cohort=a+b&targetingKey=k', 'cohort=a&cohort=b+c']) {
    const { ok, q } = parse(raw);
    t.equal(ok, false, raw);
    t.match(q.error, /"cohort" query parameter holds an unencoded "\+"/);
    t.match(q.error, /"\+" must be sent as %2B, a space as %20/);
  }
  t.equal(parse('cohort=a%20b&plan=a+b').q.cohort, 'a b');
  t.equal(parse('cohort=a&plan=a+b').q.attribute('plan'), 'a b');
  t.equal(parse('cohort=&targetingKey=x+y').ok, true, 'an empty cohort is absent');
});

t.test('a repeated parameter: the first one counts', async (t) => {
  const { q } = parse('cohort=a&cohort=b&plan=x&plan=y&targetingKey=k1&targetingKey=k2');
  t.equal(q.cohort, 'a');
  t.equal(q.targetingKey, 'k1');
  t.equal(q.attribute('plan'), 'x');
});

t.test('undecodable cohort: malformed escapes and invalid UTF-8 are refused with a fix', async (t) => {
  for (const raw of ['cohort=%', 'cohort=50%off', 'cohort=%zz', 'cohort=%4', 'cohort=a%2']) {
    const { ok, q } = parse(raw);
    t.equal(ok, false, raw);
    t.match(q.error, /"cohort" query parameter cannot be decoded: it has a "%" that does not start a valid %XX escape/);
    t.match(q.error, /URL-encode/);
    t.match(q.error, /"\+" as %2B/);
    t.match(q.error, /"%" must be sent as %25/);
  }
  for (const raw of ['cohort=%FF', 'cohort=%C3', 'cohort=%C0%AF', 'cohort=%ED%A0%80', 'cohort=%E2%82']) {
    const { ok, q } = parse(raw);
    t.equal(ok, false, raw);
    t.match(q.error, /not valid UTF-8/, raw);
  }
});

t.test('every parameter must decode, not only cohort; the detail names it', async (t) => {
  t.match(parse('targetingKey=%zz').q.error, /"targetingKey" query parameter/);
  t.match(parse('env=%FF').q.error, /"env" query parameter/);
  t.match(parse('plan=%FF').q.error, /"plan" query parameter/);
  t.match(parse('pl%zzan=1').q.error, /query parameter name "pl%zzan"/);
});

t.test('one instance is reused: parse() forgets the previous query', async (t) => {
  const q = new EvalQuery();
  q.parse('cohort=a&plan=beta&env=e&targetingKey=k');
  q.parse('country=NL');
  t.same([q.cohort, q.env, q.targetingKey, q.error], [null, null, null, null]);
  t.equal(q.attribute('plan'), undefined);
  t.equal(q.attribute('country'), 'NL');
  q.parse('cohort=%zz');
  t.ok(q.error);
  q.parse('cohort=b');
  t.equal(q.error, null);
  t.equal(q.cohort, 'b');
});

t.test('the three names are matched exactly, whether or not the query needs decoding', async (t) => {
  for (const raw of ['targetingKeY=a&cohorts=b&en=c&envv=d', 'targetingKeY=a&cohorts=b&en=c&envv=d&x=%41']) {
    const { ok, q } = parse(raw);
    t.equal(ok, true);
    t.same([q.targetingKey, q.cohort, q.env], [null, null, null], raw);
    t.same(
      ['targetingKeY', 'cohorts', 'en', 'envv'].map((name) => q.attribute(name)),
      ['a', 'b', 'c', 'd'],
      raw,
    );
  }
  // Encoded names are the same parameters once decoded.
  const { q } = parse('targeting%4Bey=k&%63ohort=c&en%76=production&pl%61n=beta');
  t.same([q.targetingKey, q.cohort, q.env, q.attribute('plan')], ['k', 'c', 'production', 'beta']);
  const plain = parse('targetingKey=k&cohort=c&env=production&plan=beta').q;
  t.same([plain.targetingKey, plain.cohort, plain.env, plain.attribute('plan')], ['k', 'c', 'production', 'beta']);
});
