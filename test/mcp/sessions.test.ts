// MCP session ids (src/mcp/sessions.ts): valid with the key that issued them, for the token that opened
// them, until their age; an id altered in any part, another key's or another token's is not; each is new.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { McpSessionIds } from '../../src/mcp/sessions.js';

const kAgeMs = 60_000;

t.test('valid for its token until its age, on any holder of the key', async (t) => {
  const key = randomBytes(32);
  const ids = new McpSessionIds(key, kAgeMs);
  const id = ids.issue('tok_a', 1_000);
  t.ok(ids.valid(id, 'tok_a', 1_000));
  t.ok(new McpSessionIds(Buffer.from(key), kAgeMs).valid(id, 'tok_a', 2_000), 'another thread with the same key');
  t.ok(ids.valid(id, 'tok_a', 1_000 + kAgeMs), 'at its age');
  t.notOk(ids.valid(id, 'tok_a', 1_001 + kAgeMs), 'past its age');
  t.not(ids.issue('tok_a', 1_000), id, 'each id is new');
});

t.test('refused: another token, another key, any part altered, no id at all', async (t) => {
  const ids = new McpSessionIds(randomBytes(32), kAgeMs);
  const id = ids.issue('tok_a', 1_000);
  t.notOk(ids.valid(id, 'tok_b', 1_000), "another token's");
  t.notOk(new McpSessionIds(randomBytes(32), kAgeMs).valid(id, 'tok_a', 1_000), "another node's");
  const parts = id.split('.');
  for (let i = 0; i < parts.length; i++) {
    const altered = parts.map((p, j) => (j === i ? `${p.slice(0, -1)}${p.endsWith('A') ? 'B' : 'A'}` : p)).join('.');
    t.notOk(ids.valid(altered, 'tok_a', 1_000), `part ${i} altered`);
  }
  const later = [parts[0], (2_000).toString(36), parts[2], parts[3]].join('.');
  t.notOk(ids.valid(later, 'tok_a', 2_000), 'a later issue time under the same proof');
  for (const bad of ['', 'v1', 'v1...', `${id}.x`, 'v2.a.b.c']) t.notOk(ids.valid(bad, 'tok_a', 1_000), `"${bad.slice(0, 20)}"`);
});
