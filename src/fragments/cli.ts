// The command line's shared fragment commands (docs/cli.md): list, create, update, delete. The rule is
// sent as the Management API's body would carry it, so every refusal reads as the API's.
import { principalOf } from '../actor/audit-actor.js';
import { command, type CliCommand, jsonOption, kAsFlagEditor, readFileOption, str } from '../cli/command/cli-command.js';
import { formatTime, renderTable } from '../cli/command/output.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { kFragmentCommands } from './command-table.js';
import { fragmentView } from './fragment-commands.js';
import { listFragments } from '../flags/records/fragment-records.js';
import type { FragmentBody, FragmentDeleted } from './schemas.js';
import type { FlagsImportResult } from './flagd-import-commands.js';

const kFlagsImportUsage = 'flags import PROJECT_ID --file FILE [--env NAME] [--as USER_ID]';
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

/** A flagd file's import: its shared fragments, then its flags, each with its outcome. */
export function renderImport(result: FlagsImportResult): string {
  if (result.flags.length === 0 && result.fragments.length === 0) return 'The file defines no flags; nothing changed.';
  const count = (list: readonly { outcome: string }[], outcome: string) => list.filter((f) => f.outcome === outcome).length;
  const counts = (list: readonly { outcome: string }[]) =>
    `${count(list, 'created')} created, ${count(list, 'updated')} updated, ${count(list, 'unchanged')} unchanged`;
  const where = result.env === null ? result.projectId : `${result.projectId}, environment ${result.env}`;
  const fragments =
    result.fragments.length === 0
      ? ''
      : `${renderTable(
          ['SHARED FRAGMENT', 'OUTCOME'],
          result.fragments.map((f) => [f.name, f.outcome]),
        )}\nShared fragments: ${counts(result.fragments)}.\n`;
  return `${fragments}${renderTable(
    ['KEY', 'ID', 'OUTCOME'],
    result.flags.map((f) => [f.key, f.id, f.outcome]),
  )}
Imported into ${where}: ${counts(result.flags)}.`;
}

export const kFragmentCli: readonly CliCommand[] = [
  // A flagd file: its flags (the flags capability's) and its $evaluators, in one transaction.
  command({
    name: 'flags import',
    usage: kFlagsImportUsage,
    summary: 'create or update flags by key from a flagd flag-definition file (JSON), all or nothing, audited -> {projectId, env, flags}',
    positionals: ['PROJECT_ID'],
    options: {
      file: str('FILE', 'the flagd flag-definition file (https://flagd.dev/reference/flag-definitions/), JSON', true),
      env: str('NAME', 'multi-environment project: the environment whose state the file sets (required there)'),
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      "Each flag's key is its name: a new name creates the flag (on for everyone its rule reaches: 100%), an existing one is updated " +
      '(state, variants, default variant, rule, metadata; its percentage, cohorts and audience are kept). Flags the file does not name are left alone. ' +
      'A refused file names the flag and the place in it, and nothing is written.',
    run(args, ctx) {
      return ctx.write(kFragmentCommands.flagsImport, {
        projectId: args.positional('PROJECT_ID'),
        document: readFileOption(args, kFlagsImportUsage),
        env: args.string('env') ?? null,
        principal: principalOf(args.string('as')),
      });
    },
    human: renderImport,
  }),
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
      return ctx.write(kFragmentCommands.fragmentCreate, input).then(fragmentView);
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
      return ctx.write(kFragmentCommands.fragmentUpdate, input).then(fragmentView);
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
