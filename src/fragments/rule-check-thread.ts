// The rule-check thread (rule-checker.ts): a fragment's new rule parsed and checked as flagd would load
// it, for one front end, one body at a time. It reads no store: the check depends on the rule alone.
import { parentPort } from 'node:worker_threads';
import { fragmentBodyRuleProblems, type RuleCheckReply, type RuleCheckRequest } from './rule-checker.js';

parentPort!.on('message', ({ id, received }: RuleCheckRequest) => {
  let problems: string[] | null;
  try {
    problems = fragmentBodyRuleProblems(received);
  } catch {
    // The writer checks the rule itself, and answers as it always did.
    problems = null;
  }
  parentPort!.postMessage({ id, problems } satisfies RuleCheckReply);
});
