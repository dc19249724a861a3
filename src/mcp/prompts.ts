// The MCP server's prompts: the three workflows an assistant does with flags (wrap a change behind a
// flag, clean a flag up, read an experiment), each telling the agent which tools to use and what
// Flagwire will and will not do for it: it proposes, a person approves.

export interface McpPromptArgument {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
}

export interface McpPrompt {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly arguments: readonly McpPromptArgument[];
  /** The prompt's text for the arguments given (each a string, the required ones present). */
  text(args: Readonly<Record<string, string>>): string;
}

/** What every prompt says of writes: the same rule every write tool runs under. */
const kApprovalRule =
  'Flagwire will not apply a change to a guarded environment for you: the tool answers with a change request and its console link, and a person approves or rejects it there or with `flagwire request approve ID`. Say so, give the link, and do not retry or work around it. A read-only token is refused every write tool; tell the person which token you would need.';

export const kMcpPrompts: readonly McpPrompt[] = [
  {
    name: 'wrap_change_in_flag',
    title: 'Wrap a change behind a flag',
    description: 'Put a code change behind a new feature flag, created off, and propose how to turn it on',
    arguments: [
      { name: 'change', description: 'What the change does, in a sentence', required: true },
      { name: 'flag', description: 'The flag key to use (default: one you propose from the change)', required: false },
    ],
    text: ({ change, flag }) =>
      [
        `Put this change behind a feature flag: ${change}.`,
        flag === undefined
          ? 'Propose a short kebab-case flag key for it, and check with list_flags that no flag has it.'
          : `Use the flag key "${flag}"; check with list_flags whether it exists.`,
        'Create the flag with create_flag (type `release`, an owner if you know one): Flagwire creates it off in every environment, whatever you ask, so merging the code changes nothing until a person turns it on.',
        "In the code, read the flag through the project's OpenFeature provider with `false` as the default, and keep the old path as the flag's off branch so it can be removed later with `flagwire refs cleanup`.",
        'To roll it out, propose change_flag (enabled, trafficPercentage) or start_rollout in a test environment first; use evaluate_flags to show who gets which answer.',
        kApprovalRule,
      ].join('\n\n'),
  },
  {
    name: 'clean_up_flag',
    title: 'Clean up a flag',
    description: 'Remove a stale flag from the code, keeping the path it serves, and propose archiving it',
    arguments: [
      { name: 'flag', description: 'The flag key (default: one that find_stale_flags lists)', required: false },
      { name: 'keep', description: 'on or off: the path the code keeps (default: what the flag serves everywhere)', required: false },
    ],
    text: ({ flag, keep }) =>
      [
        flag === undefined
          ? 'Find a flag to clean up with find_stale_flags (flags ready to archive), or list_flags with stage `settled` or `unused`.'
          : `Clean up the flag "${flag}".`,
        'Read it with get_flag: its lifecycle stage and what each environment serves. If environments serve different answers, stop and ask which path to keep.',
        keep === undefined ? 'The path to keep is the one it serves everywhere (on or off).' : `Keep the path taken when it is ${keep}.`,
        'Find its references with find_code_refs, then run `npx flagwire refs cleanup FLAG --keep on|off [PATH]` in the repository: it rewrites the TypeScript and JavaScript call sites and lists what is left to change by hand. Change those, run the tests, and open a pull request.',
        'Flagwire will not archive or delete the flag from here: once the code that reads it is deployed, a person archives it (`POST /api/v1/flags/{id}/archive` or the console).',
        kApprovalRule,
      ].join('\n\n'),
  },
  {
    name: 'read_experiment',
    title: 'Read an experiment',
    description: "Explain an experiment's results and verdict, and what may be decided from them",
    arguments: [
      { name: 'experiment', description: "The experiment's key (default: list_experiments shows them)", required: false },
      { name: 'env', description: 'The environment (multi-environment projects)', required: false },
    ],
    text: ({ experiment, env }) =>
      [
        experiment === undefined ? 'Find the experiment with list_experiments.' : `Read the experiment "${experiment}".`,
        `Get its results with get_experiment_results${env === undefined ? '' : ` in the environment "${env}"`}. Report the verdict as Flagwire gives it, each metric's effect with its always-valid interval, and the sample-ratio check; a failed sample-ratio check means the results cannot be trusted, whatever they show.`,
        'Do not declare a winner the verdict does not give: the intervals stay valid however often they are looked at, but an undecided experiment is undecided.',
        'Flagwire will not stop the experiment or ship a treatment from here: propose the change (change_flag) and let a person decide.',
        kApprovalRule,
      ].join('\n\n'),
  },
];
