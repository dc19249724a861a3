// The header lines every evaluation answer carries (answer-writer.ts), in-process: one header value
// that holds the other lines, made once per revision. The answers as a client reads them are checked
// over HTTP in test/server/security-headers.test.ts, test/api/revisions.test.ts and the OFREP tests.
import t from 'tap';
import { AnswerHeads } from '../../../src/evaluation/engine/answer-writer.js';

/** The lines as a client parses them: `Flagwire-Revision: ` + the value, split at CRLF. */
function headers(value: Buffer): Map<string, string> {
  const lines = `Flagwire-Revision: ${value.toString()}`.split('\r\n');
  return new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 2)]));
}

t.test('AnswerHeads: every header an evaluation answer has, the revision first', async (t) => {
  const heads = new AnswerHeads().at(42);
  t.same(Object.fromEntries(headers(heads.plain)), {
    'flagwire-revision': '42',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
    'access-control-expose-headers': 'Flagwire-Revision',
    'content-type': 'application/json',
  });
  t.same(Object.fromEntries(headers(heads.tagged)), {
    'flagwire-revision': '42',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
    'access-control-expose-headers': 'ETag, Flagwire-Revision',
  });
});

t.test('AnswerHeads: the same bytes while the revision stays, new ones when it moves', async (t) => {
  const heads = new AnswerHeads();
  const plain = heads.at(7).plain;
  t.equal(heads.at(7).plain, plain, 'not made again');
  t.equal(headers(heads.at(2 ** 40).plain).get('flagwire-revision'), '1099511627776');
  t.not(heads.plain, plain);
});
