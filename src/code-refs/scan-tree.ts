// A folder's flag references: every file of a language a scan reads (languages.ts), under the folder,
// outside what a repository does not hold as source (dependencies, build output, what the folder's
// .gitignore names by a plain name or `*.ext`), and no larger than a bound.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { type Language, languageOf } from './languages.js';
import { scanSource } from './scan.js';
import type { CodeReference } from './schemas.js';

/** Folders never read: installed dependencies, version control, build output. */
const kExcludedFolders: ReadonlySet<string> = new Set([
  'node_modules',
  '.git',
  'vendor',
  'dist',
  'build',
  'target',
  'bin',
  'obj',
  '.venv',
  '__pycache__',
]);

/** A larger file is skipped (generated or bundled code), and listed as skipped. */
export const kMaxScannedFileBytes = 512 * 1024;

export interface ScanResult {
  /** The folder scanned, as given. */
  readonly root: string;
  readonly filesScanned: number;
  /** Files of a scanned language not read, with why. */
  readonly skipped: readonly { readonly file: string; readonly reason: string }[];
  readonly references: readonly CodeReference[];
}

/** What the folder's .gitignore names simply: names (any depth) and name endings (`*.ext`). */
async function ignoreRules(root: string): Promise<{ names: Set<string>; endings: string[] }> {
  const names = new Set<string>();
  const endings: string[] = [];
  let text = '';
  try {
    text = await readFile(join(root, '.gitignore'), 'utf8');
  } catch {
    return { names, endings };
  }
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^\/|\/$/g, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    if (/^\*\.[\w.]+$/.test(line)) endings.push(line.slice(1));
    else if (/^[\w.-]+$/.test(line)) names.add(line);
  }
  return { names, endings };
}

/** A file a scan reads: its path on disk and the path it is reported by (from the root, with /). */
export interface SourceFile {
  readonly path: string;
  readonly file: string;
  readonly language: Language;
}

/** The files under `root` (a folder, or a file alone) that a scan reads, and those it skips. */
export async function sourceFiles(root: string): Promise<{ files: SourceFile[]; skipped: { file: string; reason: string }[] }> {
  const rules = await ignoreRules(root);
  const ignored = (name: string) => rules.names.has(name) || rules.endings.some((ending) => name.endsWith(ending));
  const rootStat = await stat(root);
  const pending: string[] = rootStat.isDirectory() ? [root] : [];
  const paths: string[] = rootStat.isFile() ? [root] : [];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (ignored(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!kExcludedFolders.has(entry.name)) pending.push(path);
      } else if (entry.isFile() && languageOf(entry.name) !== undefined) paths.push(path);
    }
  }
  paths.sort();
  const files: SourceFile[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const path of paths) {
    const file = rootStat.isFile() ? basename(path) : relative(root, path).split(sep).join('/');
    if ((await stat(path)).size > kMaxScannedFileBytes) skipped.push({ file, reason: `larger than ${kMaxScannedFileBytes} bytes` });
    else files.push({ path, file, language: languageOf(path)! });
  }
  return { files, skipped };
}

export async function scanTree(root: string): Promise<ScanResult> {
  const { files, skipped } = await sourceFiles(root);
  const references: CodeReference[] = [];
  for (const { path, file, language } of files) references.push(...(await scanSource(language, file, await readFile(path, 'utf8'))));
  return { root, filesScanned: files.length, skipped, references };
}
