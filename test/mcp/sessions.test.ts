// The MCP session table (src/mcp/sessions.ts): bounded in count (the least recently used ended to make
// room), in idle time (an idle session ended when looked at or when room is made), and bound to the token
// that opened it.
import t from 'tap';
import { type McpSession, McpSessions } from '../../src/mcp/sessions.js';

function table(maxSessions: number, sessionIdleMs = 60_000) {
  const closed: string[] = [];
  const sessions = new McpSessions<McpSession>({ maxSessions, sessionIdleMs });
  const add = (id: string, now: number, tokenId = 'tok_a') => {
    sessions.makeRoom(now);
    sessions.add({ id, tokenId, usedAt: now, close: () => closed.push(id) });
  };
  return { sessions, add, closed };
}

t.test('past the bound, the least recently used session is ended', async (t) => {
  const { sessions, add, closed } = table(3);
  add('a', 0);
  add('b', 1);
  add('c', 2);
  t.ok(sessions.use('a', 'tok_a', 3), 'a used: b is now the least recently used');
  add('d', 4);
  t.strictSame(closed, ['b']);
  t.equal(sessions.size, 3);
  t.equal(sessions.use('b', 'tok_a', 5), null);
  for (let i = 0; i < 1000; i++) add(`s${i}`, 10 + i);
  t.equal(sessions.size, 3, 'never more than the bound');
  t.equal(closed.length, 1001);
});

t.test('an idle session ends when used, and idle ones make room first', async (t) => {
  const { sessions, add, closed } = table(3, 100);
  add('old', 0);
  add('fresh', 150);
  t.equal(sessions.use('old', 'tok_a', 201), null, 'idle past its time');
  t.strictSame(closed, ['old']);
  add('x', 200);
  add('y', 300);
  t.strictSame(closed, ['old', 'fresh'], 'the idle one made room, not a live one');
  t.equal(sessions.size, 2);
});

t.test("a session is its token's", async (t) => {
  const { sessions, add } = table(3);
  add('a', 0, 'tok_a');
  t.equal(sessions.use('a', 'tok_b', 1), null);
  t.ok(sessions.use('a', 'tok_a', 1));
  sessions.end('a');
  t.equal(sessions.size, 0);
});
