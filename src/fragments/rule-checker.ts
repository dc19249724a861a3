// Where a fragment's new rule is checked before its change goes to the writer: a thread of its own,
// never the writer's or the front end's. The rule's own check (flagd's, compiling it) grows with its
// size, about 0.4 s per MiB; in the writer's transaction every project's changes waited for it (a
// 0.96 MB fragment rewritten every 0.75 s took another tenant's PATCH p99 from 16 to 871 ms), and on
// the front end every request of the node would. Its result depends on the rule alone, so it is found
// here and handed to the writer with the command, which checks everything that depends on the store in
// its transaction as before. Each front end starts one such thread at its first fragment change.
import { Worker } from 'node:worker_threads';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { fragmentRuleProblems } from './fragment-commands.js';
import { FragmentUpdate } from './schemas.js';

export interface RuleCheckRequest {
  id: number;
  received: ReceivedBody;
}

/** The rule's own problems (none: []), or null where the body is not a fragment change the writer would read. */
export interface RuleCheckReply {
  id: number;
  problems: string[] | null;
}

const kUpdateValidator = compileValidator(FragmentUpdate, { quoteKeys: true });

/** A `{rule}` body's rule's own problems (fragmentRuleProblems); null when the body is refused before its rule is read. */
export function fragmentBodyRuleProblems(received: ReceivedBody): string[] | null {
  let rule: Record<string, unknown>;
  try {
    rule = checkedBody(received, kUpdateValidator).rule;
  } catch {
    return null;
  }
  return fragmentRuleProblems(rule);
}

let thread: Worker | null = null;
let nextId = 1;
const pending = new Map<number, (problems: string[] | null) => void>();

function started(): Worker {
  if (thread !== null) return thread;
  const worker = new Worker(new URL('./rule-check-thread.js', import.meta.url));
  worker.on('message', ({ id, problems }: RuleCheckReply) => {
    pending.get(id)?.(problems);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
  });
  // A thread that failed leaves its checks to the writer; the next change starts a new one.
  const ended = () => {
    if (thread === worker) thread = null;
    for (const [id, answer] of pending) {
      pending.delete(id);
      answer(null);
    }
  };
  worker.on('error', ended);
  worker.on('exit', ended);
  // An idle check thread keeps no process alive (after the listeners: adding one refs the thread again).
  worker.unref();
  thread = worker;
  return worker;
}

/**
 * The problems of the rule in `received` (a fragment change's `{rule}` body), found off this thread;
 * null where the writer must find them itself (a body it refuses before reading the rule, or a thread
 * that failed). The body is copied to the thread, not moved: the writer reads the same bytes.
 */
export function checkFragmentRule(received: ReceivedBody): Promise<string[] | null> {
  const worker = started();
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    // Held while a check is under way, so a process awaiting its answer lives to read it.
    worker.ref();
    worker.postMessage({ id, received } satisfies RuleCheckRequest);
  });
}
