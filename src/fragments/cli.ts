// The command line's shared fragment commands (docs/cli.md): list, create, update, delete. The rule is
// sent as the Management API's body would carry it, so every refusal reads as the API's.
import { principalOf } from '../audit/audit-actor.js';
import { command, type ConsoleCommand, jsonOption, kAsFlagEditor, str } from '../cli-command/console-command.js';
import { formatTime, renderTable } from '../cli-command/output.js';
import { requireProject } from '../model/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { kFragmentCommands } from './command-table.js';
import { fragmentView, listFragments } from './fragment-commands.js';
import type { FragmentBody, FragmentDeleted } from './schemas.js';

const kCreateUsage = 'fragment create PROJECT_ID NAME --rule JSON [--as USER_ID]';
const kUpdateUsage = 'fragment update PROJECT_ID NAME --rule JSON [--as USER_ID]';
const kNameHelp = { NAME: 'the shared fragment\'s name, as a rule names it: {"$ref": "NAME"}' };
const kRuleHelp = 'a JsonLogic rule with flagd\'s operators, without $ref (a long one: --rule "$(cat rule.json)")';

function renderFragments(result: { fragments: FragmentBody[] }): string {
  if (result.fragments.length === 0) return 'No shared fragments.';
  return renderTable(
    ['NAME', 'UPDATED', 'RULE'],
    result.fragments.map((f) => [f.name, formatTime(f.updatedAt), JSON.stringify(f.rule)]),
  );
}

function renderFragment(fragment: FragmentBody): string {
  return `Shared fragment ${fragment.name} (updated ${formatTime(fragment.updatedAt)}): ${JSON.stringify(fragment.rule)}`;
}

export const kFragmentCli: readonly ConsoleCommand[] = [
  command({
    name: 'fragment list',
    usage: 'fragment list PROJECT_ID',
    summary: "a project's shared fragments (flagd's $evaluators), by name -> {fragments: [...]}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => ({ fragments: listFragments(r, requireProject(r, args.positional('PROJECT_ID')).id).map(fragmentView) })),
    human: renderFragments,
  }),
  command({
    name: 'fragment create',
    usage: kCreateUsage,
    summary: 'make a shared fragment: a named rule that flag rules use as {"$ref": NAME} -> the fragment',
    positionals: ['PROJECT_ID', 'NAME'],
    argumentHelp: kNameHelp,
    options: { rule: str('JSON', kRuleHelp, true), as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) => {
      const rule = jsonOption('rule', args.required('rule'), `Usage: flagwire ${kCreateUsage}`);
      const input = {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        received: jsonBody(JSON.stringify({ name: args.positional('NAME'), rule })),
      };
      return ctx.write(kFragmentCommands.fragmentCreate, input);
    },
    human: renderFragment,
  }),
  command({
    name: 'fragment update',
    usage: kUpdateUsage,
    summary: "change a shared fragment's rule: every flag that uses it answers by the new one (checked with each first) -> the fragment",
    positionals: ['PROJECT_ID', 'NAME'],
    argumentHelp: kNameHelp,
    options: { rule: str('JSON', kRuleHelp, true), as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) => {
      const rule = jsonOption('rule', args.required('rule'), `Usage: flagwire ${kUpdateUsage}`);
      const input = {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        name: args.positional('NAME'),
        received: jsonBody(JSON.stringify({ rule })),
      };
      return ctx.write(kFragmentCommands.fragmentUpdate, input);
    },
    human: renderFragment,
  }),
  command({
    name: 'fragment delete',
    usage: 'fragment delete PROJECT_ID NAME [--as USER_ID]',
    summary: 'delete a shared fragment no flag uses (refused, naming the flags, while one does) -> {name, deleted}',
    positionals: ['PROJECT_ID', 'NAME'],
    argumentHelp: kNameHelp,
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFragmentCommands.fragmentDelete, {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        name: args.positional('NAME'),
      }),
    human: (result: FragmentDeleted) => `Deleted shared fragment ${result.name}.`,
  }),
];
