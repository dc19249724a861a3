// The command line's code reference commands (docs/cli.md, docs/code-refs.md): a folder scanned for flag
// keys (and the result pushed to a Flagwire server for a branch and commit), and a flag's call sites
// rewritten to the path it keeps. Neither opens the store: they read and write source files.
import { basename, resolve } from 'node:path';
import { UsageError } from '../cli/command/args.js';
import { bool, type CliCommand, command, str } from '../cli/command/cli-command.js';
import { FlagwireError } from '../errors.js';
import { loadOnUse } from '../load-on-use.js';
import { cleanup, type CleanupResult, type Kept } from './cleanup.js';
import { type ScanResult, scanTree } from './scan-tree.js';
import type { CodeRefsPush, CodeRefsPushed, CodeReference } from './schemas.js';

/** Asked only to name a push's branch and commit: loaded then, not with the commands (src/load-on-use.ts). */
const childProcess = loadOnUse<typeof import('node:child_process')>('node:child_process');

const kScanUsage = 'refs scan [PATH] [--push --url URL --token TOKEN [--repository NAME] [--branch NAME] [--commit SHA]]';

export type ScanOutcome = ScanResult & { readonly pushed: CodeRefsPushed | null };

export const kCodeRefCli: readonly CliCommand[] = [
  command({
    name: 'refs scan',
    usage: kScanUsage,
    summary:
      'find flag keys in source code (OpenFeature, Unleash and Flagwire provider calls) -> {root, filesScanned, skipped, references, pushed}',
    positionals: ['[PATH]'],
    argumentHelp: { '[PATH]': 'the folder (or file) to scan; default: the current folder' },
    options: {
      push: bool("send the references to a Flagwire server's POST /api/v1/code-refs (a write token)"),
      url: str('URL', "with --push: the server's base URL"),
      token: str('TOKEN', "with --push: a write token of the flags' project"),
      repository: str('NAME', "with --push: the repository's name (default: git's origin URL, else the folder's name)"),
      branch: str('NAME', "with --push: the branch scanned (default: git's current branch)"),
      commit: str('SHA', "with --push: the commit scanned (default: git's HEAD)"),
    },
    notes:
      'Languages: TypeScript, JavaScript, Python, Go, Java, C#, Kotlin, Ruby. A key is reported as a literal, a constant of the same file, an alias of one, or unknown (computed): never guessed. node_modules, .git, vendor, dist and what .gitignore names simply are skipped, and so are files over 512 KiB.',
    async run(args): Promise<ScanOutcome> {
      const usage = `Usage: flagwire ${kScanUsage}`;
      const root = resolve(args.optionalPositional('[PATH]') ?? '.');
      const push = args.flag('push');
      if (!push && ['url', 'token', 'repository', 'branch', 'commit'].some((o) => args.string(o) !== undefined))
        throw new UsageError('--url, --token, --repository, --branch and --commit go with --push', usage);
      if (push && (args.string('url') === undefined || args.string('token') === undefined))
        throw new UsageError('--push needs --url and --token', usage);
      const result = await scanTree(root);
      if (!push) return { ...result, pushed: null };
      const body: CodeRefsPush = {
        repository: args.string('repository') ?? gitValue(root, ['config', '--get', 'remote.origin.url']) ?? basename(root),
        branch: args.string('branch') ?? required(gitValue(root, ['rev-parse', '--abbrev-ref', 'HEAD']), '--branch', usage),
        commit: args.string('commit') ?? required(gitValue(root, ['rev-parse', 'HEAD']), '--commit', usage),
        references: [...result.references],
      };
      return { ...result, pushed: await pushRefs(args.string('url')!, args.string('token')!, body) };
    },
    human: renderScan,
  }),
  command({
    name: 'refs cleanup',
    usage: 'refs cleanup FLAG --keep on|off [PATH]',
    summary:
      "rewrite a flag's TypeScript and JavaScript call sites to the path it keeps, and list what is left to change by hand -> {flag, keep, filesChanged, rewritten, left}",
    positionals: ['FLAG', '[PATH]'],
    argumentHelp: { FLAG: 'the flag key', '[PATH]': 'the folder (or file) to rewrite; default: the current folder' },
    options: { keep: str('on|off', 'the value the flag keeps: its call sites become the path taken on it', true) },
    notes:
      "Rewritten: an if/else on the flag's boolean value (await, parentheses and ! included), a ternary, and a const bound to the value whose every use is such a condition. Everything else, and every place in another language, is listed. Commit first: files are changed in place.",
    async run(args): Promise<CleanupResult> {
      const keep = args.required('keep');
      if (keep !== 'on' && keep !== 'off')
        throw new UsageError('--keep is on or off', 'Usage: flagwire refs cleanup FLAG --keep on|off [PATH]');
      return cleanup(resolve(args.optionalPositional('[PATH]') ?? '.'), args.positional('FLAG'), keep satisfies Kept);
    },
    human: renderCleanup,
  }),
];

function required(value: string | undefined, option: string, usage: string): string {
  if (value === undefined || value === 'HEAD') throw new UsageError(`git cannot tell the ${option.slice(2)} here: give ${option}`, usage);
  return value;
}

/** What git says of the scanned folder; undefined outside a repository (or without git). */
function gitValue(cwd: string, args: readonly string[]): string | undefined {
  try {
    const out = childProcess()
      .execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

async function pushRefs(url: string, token: string, body: CodeRefsPush): Promise<CodeRefsPushed> {
  const target = `${url.replace(/\/+$/, '')}/api/v1/code-refs`;
  let res: Response;
  try {
    res = await fetch(target, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new FlagwireError('INVALID_REQUEST', `cannot reach ${target} (${(err as Error).cause ?? (err as Error).message})`);
  }
  const text = await res.text();
  if (!res.ok) throw new FlagwireError('INVALID_REQUEST', `${target} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as CodeRefsPushed;
}

function renderScan(outcome: ScanOutcome): string {
  const lines: string[] = [];
  for (const ref of outcome.references) lines.push(...renderReference(ref), '');
  const known = outcome.references.filter((r) => r.key !== null);
  lines.push(
    `${outcome.references.length} reference(s) to ${new Set(known.map((r) => r.key)).size} key(s) in ${outcome.filesScanned} file(s); ${outcome.references.length - known.length} with a computed key (unknown).`,
  );
  for (const s of outcome.skipped) lines.push(`skipped ${s.file}: ${s.reason}`);
  if (outcome.pushed !== null)
    lines.push(
      `Pushed ${outcome.pushed.references} reference(s) for ${outcome.pushed.repository}@${outcome.pushed.branch} (${outcome.pushed.commit}).`,
    );
  return lines.join('\n');
}

function renderReference(ref: CodeReference): string[] {
  const head = `${ref.file}:${ref.line}  ${ref.key ?? `unknown (${ref.expression})`}  [${ref.kind}, ${ref.sdk} ${ref.method}]`;
  return [head, ...ref.context.map((line, i) => `  ${String(ref.contextStart + i).padStart(5)} | ${line}`)];
}

function renderCleanup(result: CleanupResult): string {
  const lines = [
    `Flag ${result.flag}, kept ${result.keep}: ${result.rewritten.length} place(s) rewritten in ${result.filesChanged.length} file(s).`,
  ];
  for (const p of result.rewritten) lines.push(`  rewritten ${p.file}:${p.line} (${p.what})`);
  for (const p of result.removed) lines.push(`  removed ${p.file}:${p.line} (${p.what}: no use left)`);
  if (result.unusedExports.length > 0) lines.push(`${result.unusedExports.length} exported name(s) no longer used in their file:`);
  for (const p of result.unusedExports) lines.push(`  ${p.file}:${p.line} ${p.what}`);
  if (result.left.length > 0) lines.push(`${result.left.length} place(s) to change by hand:`);
  for (const p of result.left) lines.push(`  ${p.file}:${p.line} [${p.language}] ${p.what}`);
  return lines.join('\n');
}
