// Command-line parsing for the console: find the command words, then let node:util parseArgs check
// that command's options strictly. Everything wrong with the shape of a command line (unknown
// command or option, missing argument or required option, a value the console itself must convert)
// is a UsageError: exit 2 with help on stderr. Whether a well-formed value is acceptable (a plan, a
// role, an expiry) is the writer command's decision, reported as a FlagwireError (exit 1).
import { isUtf8 } from 'node:buffer';
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** What the command's help says about it: every option is explained. */
  help: string;
  /** The value's placeholder in the help (`NAME`); string options only. */
  value?: string;
  /** May be given more than once (string options only). */
  multiple?: boolean;
  short?: string;
  required?: boolean;
}

/** The shape of one command-line command: its words, positional arguments and options. */
export interface CommandSpec {
  /** Command words, e.g. `org create`. */
  name: string;
  /** The usage line after `flagwire `, e.g. `org create --name NAME [--plan P]`. */
  usage: string;
  summary: string;
  /** Names of the positional arguments, in order (e.g. `ORG_ID`); one in brackets (`[PATH]`) may be left out, as may those after it. */
  positionals: readonly string[];
  /** What each positional is. */
  argumentHelp?: Readonly<Record<string, string>>;
  options: Readonly<Record<string, OptionSpec>>;
  /** A last paragraph of help (how options combine). */
  notes?: string;
}

/** Options every command accepts. */
export const kGlobalOptions = {
  data: {
    type: 'string',
    value: 'DIR',
    help: 'the data directory (default: $FLAGWIRE_DATA, else ./data); it must exist, except for serve and org create',
  },
  database: {
    type: 'string',
    value: 'URL',
    help: "PostgreSQL as the system of record, postgres://USER:PASSWORD@HOST:PORT/DB (default: $FLAGWIRE_DATABASE_URL, else none: the data directory alone); the data directory is then this machine's copy",
  },
  json: { type: 'boolean', help: 'print exactly one JSON object on stdout; errors as {"error", "detail"}' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies Record<string, OptionSpec>;

export class UsageError extends Error {
  /** The help text to show with it: the command's usage, or the list of commands. */
  readonly help: string;
  constructor(message: string, help: string) {
    super(message);
    this.name = 'UsageError';
    this.help = help;
  }
}

type OptionValue = string | boolean | (string | boolean)[] | undefined;

/** A parsed command line: which command (null with --help and no command), its arguments, the globals. */
export interface CommandLine<S extends CommandSpec = CommandSpec> {
  spec: S | null;
  args: Args;
  json: boolean;
  data: string | undefined;
  /** --database as given (FLAGWIRE_DATABASE_URL is read by config.ts). */
  database: string | undefined;
  /** --help was given: print `helpText` and exit 0 instead of running anything. */
  help: boolean;
  /** --version was given without a command: print the version and exit 0. */
  version: boolean;
  helpText: string;
}

/** Typed, checked access to one command's positionals and option values. */
export class Args {
  constructor(
    private readonly positionalValues: Readonly<Record<string, string>>,
    private readonly values: Readonly<Record<string, OptionValue>>,
    private readonly helpText: string,
  ) {}

  /** A required positional argument (its presence was checked while parsing). */
  positional(name: string): string {
    const value = this.positionalValues[name];
    if (value === undefined) throw new Error(`no positional ${name} in this command's spec`);
    return value;
  }

  /** A positional argument that may be left out (its name in brackets: `[PATH]`); undefined when it was. */
  optionalPositional(name: string): string | undefined {
    return this.positionalValues[name];
  }

  string(name: string): string | undefined {
    const value = this.values[name];
    if (Array.isArray(value)) return value.length === 0 ? undefined : String(value[value.length - 1]);
    return typeof value === 'string' ? value : undefined;
  }

  /** A required option (its presence was checked while parsing). */
  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw new UsageError(`missing --${name}`, this.helpText);
    return value;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** Every value of a repeatable option, as given (undefined when the option is absent). */
  all(name: string): string[] | undefined {
    const value = this.values[name];
    if (value === undefined) return undefined;
    return (Array.isArray(value) ? value : [value]).map(String);
  }

  /** A repeatable option whose values may also be comma lists: `--env a,b --env c` -> [a, b, c]. */
  list(name: string): string[] | undefined {
    return this.all(name)?.flatMap(splitList);
  }

  /** A whole number option within [min, max]. */
  integer(name: string, min: number, max: number): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${raw}"`, this.helpText);
    }
    return n;
  }

  /** An ISO-8601 date (`2025-07-01`, taken as UTC midnight) or date-time with a zone, as Unix ms. */
  isoTime(name: string): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const ms = parseIsoTime(raw);
    if (ms === null) {
      throw new UsageError(
        `--${name} must be an ISO-8601 date or date-time with a zone (2025-07-01 or 2025-07-01T12:00:00Z), not "${raw}"`,
        this.helpText,
      );
    }
    return ms;
  }
}

/** `a,b, c` -> [a, b, c]; an empty string is the empty list. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const kIsoDate = /^\d{4}-\d{2}-\d{2}$/;
const kIsoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A date-time without a zone would silently depend on the machine's time zone: refused. */
export function parseIsoTime(text: string): number | null {
  if (!kIsoDate.test(text) && !kIsoDateTime.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/** Help for every command, grouped in table order. */
export function generalHelp(specs: readonly CommandSpec[]): string {
  const width = Math.max(...specs.map((s) => s.name.length));
  return [
    'Usage: flagwire <command> [arguments] [--data DIR] [--database URL] [--json]',
    '',
    'Commands:',
    ...specs.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}`),
    '',
    'Global options:',
    ...optionLines({ ...kGlobalOptions, version: { type: 'boolean', help: 'print the version (with --json: {"version"}); no command' } }),
    '',
    'Run "flagwire <command> --help" for a command\'s arguments and options.',
    'Exit status: 0 done, 1 the command failed, 2 usage or configuration error, 3 a change request holds the change (not applied).',
  ].join('\n');
}

/** `  --name NAME   help` lines, help aligned. */
function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const label = (name: string, o: OptionSpec) => `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}`;
  return helpLines(Object.entries(options).map(([name, o]) => [label(name, o), o.help]));
}

function helpLines(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(14, ...rows.map(([label]) => label.length));
  return rows.map(([label, help]) => `  ${label.padEnd(width)}  ${help}`);
}

export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: flagwire ${spec.usage}`, '', `  ${spec.summary}`];
  if (spec.positionals.length > 0) {
    lines.push('', 'Arguments:', ...helpLines(spec.positionals.map((p) => [p, spec.argumentHelp?.[p] ?? ''])));
  }
  if (Object.keys(spec.options).length > 0) lines.push('', 'Options:', ...optionLines(spec.options));
  if (spec.notes !== undefined) lines.push('', spec.notes);
  lines.push('', 'Global options:', ...optionLines(kGlobalOptions));
  return lines.join('\n');
}

function groupHelp(group: string, specs: readonly CommandSpec[]): string {
  return [`Usage:`, ...specs.map((s) => `  flagwire ${s.usage}`), '', `Run "flagwire ${group} <subcommand> --help" for details.`].join(
    '\n',
  );
}

const kShortUsage = 'Usage: flagwire <command> [arguments] [--data DIR] [--json]; "flagwire --help" lists every command.';

/** `unknown command "X"`, with the commands it is likely a mistyping of: by prefix, or within a few edits. */
function unknownCommand(word: string, specs: readonly CommandSpec[]): string {
  const names = [...new Set(specs.map((s) => s.name.split(' ')[0]!))];
  const typed = word.toLowerCase();
  // A third of the word's letters may be wrong (at least one): "flga" finds flag, "zzz" finds nothing.
  const allowed = Math.max(1, Math.floor(typed.length / 3));
  const near = names
    .map((name) => ({ name, distance: name.startsWith(typed) && typed.length >= 2 ? 0 : editDistance(typed, name) }))
    .filter((n) => n.distance <= allowed)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, 3)
    .map((n) => `"${n.name}"`);
  return near.length === 0 ? `unknown command "${word}"` : `unknown command "${word}"; did you mean ${near.join(' or ')}?`;
}

/** Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** Tokens that are option names taking a value among the global options (their value is skipped). */
function takesValue(token: string): boolean {
  return token === '--data' || token === '--database';
}

/**
 * Parses `argv` (without node and script) against the command table. Command words come first;
 * global options may appear anywhere. Throws UsageError.
 */
export function parseCommandLine<S extends CommandSpec>(argv: readonly string[], specs: readonly S[]): CommandLine<S> {
  // 1. The command words: the first non-option tokens that name a command (global options may precede them).
  const { wordIndexes, wantHelp } = commandWords(argv, specs);
  const words = wordIndexes.map((i) => argv[i]!);
  const general = generalHelp(specs);
  const jsonGiven = wantsJson(argv);

  if (words.length === 0 && argv.includes('--version')) {
    // Only global options may go with it: `flagwire --version --json`.
    const stray = argv.find(
      (a, i) => a !== '--version' && a !== '--json' && !/^--data(base)?=/.test(a) && !takesValue(a) && !takesValue(argv[i - 1] ?? ''),
    );
    if (stray !== undefined) throw new UsageError(`--version takes no other argument ("${stray}")`, general);
    return generalAnswer(general, jsonGiven, 'version');
  }
  if (words.length === 0 || words[0] === 'help') {
    if (wantHelp || words[0] === 'help') {
      return generalAnswer(general, jsonGiven, 'help');
    }
    throw new UsageError('no command given', general);
  }
  const group = specs.filter((s) => s.name === words[0] || s.name.startsWith(`${words[0]} `));
  // Not the whole help (some hundred lines that bury the mistake): the nearest commands and where the help is.
  if (group.length === 0) throw new UsageError(unknownCommand(words[0]!, specs), kShortUsage);
  const spec = group.find((s) => s.name === words.join(' ')) ?? group.find((s) => s.name === words[0]);
  if (!spec) {
    const help = groupHelp(words[0]!, group);
    if (wantHelp && words.length === 1) {
      return generalAnswer(help, jsonGiven, 'help');
    }
    const subcommands = group.map((s) => s.name.split(' ').slice(1).join(' ')).join(', ');
    throw new UsageError(
      words.length === 1
        ? `"${words[0]}" needs a subcommand: ${subcommands}`
        : `unknown command "${words.join(' ')}"; "${words[0]}" has: ${subcommands}`,
      help,
    );
  }
  const usedWords = spec.name.split(' ').length;
  const used = new Set(wordIndexes.slice(0, usedWords));
  const rest = argv.filter((_, i) => !used.has(i));
  const help = commandHelp(spec);

  // 2. The command's own options and positionals, strictly.
  return parseCommandArgs(spec, rest, help);
}

/** The indexes of the command words in `argv` (one to three, as the table has them), and whether help was asked for before them. */
function commandWords(argv: readonly string[], specs: readonly CommandSpec[]): { wordIndexes: number[]; wantHelp: boolean } {
  const wordIndexes: number[] = [];
  let wantHelp = false;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') break;
    if (token === '--help' || token === '-h') wantHelp = true;
    if (token.startsWith('-')) {
      if (takesValue(token)) i++;
      continue;
    }
    // Another word only while the words so far begin a longer command's name (`relay key create`).
    const sofar = wordIndexes.map((w) => argv[w]!).join(' ');
    if (wordIndexes.length > 0 && !specs.some((s) => s.name.startsWith(`${sofar} `))) break;
    wordIndexes.push(i);
  }
  return { wordIndexes, wantHelp };
}

/** A command line that names no one command: help (general or a group's) or the version. */
function generalAnswer<S extends CommandSpec>(helpText: string, json: boolean, asked: 'help' | 'version'): CommandLine<S> {
  return {
    spec: null,
    args: new Args({}, {}, helpText),
    json,
    data: undefined,
    database: undefined,
    help: asked === 'help',
    version: asked === 'version',
    helpText,
  };
}

/** The command's own options and positionals (`rest`: argv without its command words), strictly. */
function parseCommandArgs<S extends CommandSpec>(spec: S, rest: string[], help: string): CommandLine<S> {
  let parsed: { values: Record<string, OptionValue>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...spec.options, ...kGlobalOptions },
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (err) {
    throw new UsageError((err as Error).message, help);
  }
  const values = parsed.values;
  const json = values.json === true;
  const data = typeof values.data === 'string' ? values.data : undefined;
  const database = typeof values.database === 'string' ? values.database : undefined;
  if (values.help === true)
    return { spec, args: new Args({}, values, help), json, data, database, help: true, version: false, helpText: help };

  const missing = spec.positionals.slice(parsed.positionals.length).filter((name) => !name.startsWith('['));
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(' ')}`, help);
  if (parsed.positionals.length > spec.positionals.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[spec.positionals.length]}"`, help);
  }
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required && values[name] === undefined) throw new UsageError(`missing --${name}`, help);
  }
  const positionals: Record<string, string> = {};
  for (const [i, name] of spec.positionals.entries()) if (i < parsed.positionals.length) positionals[name] = parsed.positionals[i]!;
  return { spec, args: new Args(positionals, values, help), json, data, database, help: false, version: false, helpText: help };
}

/** Whether `--json` was asked for, read without parsing (for errors found before parsing finished). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * The positions (0-based in `argv`) of arguments whose bytes are not valid UTF-8. Node decodes the
 * command line with replacement, so `dup\xff` arrives as `dup\uFFFD` and would be stored so, and
 * `dup\xfe` would become the same name; only the bytes as given can tell. `rawCommandLine` is the
 * process's NUL-separated command line (Linux: /proc/self/cmdline), whose last arguments are `argv`;
 * when it is null or does not match `argv` (another system, a changed process title), nothing can be
 * seen and nothing is reported.
 */
export function undecodableArguments(argv: readonly string[], rawCommandLine: Buffer | null): number[] {
  if (rawCommandLine === null || argv.length === 0) return [];
  const raw: Buffer[] = [];
  for (let start = 0; start < rawCommandLine.length; ) {
    const end = rawCommandLine.indexOf(0, start);
    raw.push(rawCommandLine.subarray(start, end === -1 ? rawCommandLine.length : end));
    start = end === -1 ? rawCommandLine.length : end + 1;
  }
  const tail = raw.slice(-argv.length);
  if (tail.length !== argv.length || tail.some((bytes, i) => bytes.toString('utf8') !== argv[i])) return [];
  return tail.flatMap((bytes, i) => (isUtf8(bytes) ? [] : [i]));
}
