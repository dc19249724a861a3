// A failure's location in the test's TypeScript, with each source map read only when a stack names its
// module. scripts/run-tests.mjs starts every test file with `--import` of this module, not with
// `--enable-source-maps`: that flag makes Node read and parse the map of every module as it compiles it
// (some 250 modules in most test processes, 0.1-0.2 CPU s a file), for maps that only a failure reads.
//
// A stack is mapped where two readers ask, as they did with the flag:
// - tap's report of a failed assertion (`at`, `stack`, `source`) maps the call sites it captured through
//   node:module's findSourceMap, which answers only from Node's own cache (filled by the flag): it is
//   given a fallback that reads the map here.
// - An error's `stack` (a thrown error's report, a rejection's) is formatted through
//   Error.prepareStackTrace: set here to Node's formatting with source maps (lib/internal/source_map/
//   prepare_stack_trace.js in Node 20), frame for frame.
// Both map what the flag mapped in a test process: ES modules (frames named by a file: URL) whose file
// names a map. Scripts that node:vm runs (the build's cached bundles, tap's) stay as the flag left them.
import module, { SourceMap, type SourceMapPayload } from 'node:module';
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A module's map by its URL; null: it names none, or it cannot be read. */
const maps = new Map<string, SourceMap | null>();

/** Node's reading of a module's last sourceMappingURL comment (source_map_cache.js). */
const kMapComment = /\/[*/]#\s+sourceMappingURL=(?<url>[^\s]+)/g;

function readMap(url: string): SourceMap | null {
  try {
    const source = readFileSync(fileURLToPath(url), 'utf8');
    const named = [...source.matchAll(kMapComment)].at(-1)?.groups?.url;
    if (named === undefined) return null;
    const mapUrl = new URL(named, url);
    // tsc writes each map to a file beside its module; a map in a data: URL is left unread.
    if (mapUrl.protocol !== 'file:') return null;
    const payload = JSON.parse(readFileSync(fileURLToPath(mapUrl), 'utf8')) as SourceMapPayload;
    // The sources as absolute URLs, as Node's cache holds them (sourcesToAbsolute).
    payload.sources = payload.sources.map((s) => {
      const source = (payload.sourceRoot || '') + s;
      return isAbsolute(source) ? pathToFileURL(source).href : new URL(source, mapUrl).href;
    });
    payload.sourceRoot = '';
    return new SourceMap(payload);
  } catch {
    return null;
  }
}

/** The map of the ES module at `url` (a file: URL), read on its first call. */
function mapOf(url: string): SourceMap | null {
  let map = maps.get(url);
  if (map === undefined) {
    map = readMap(url);
    maps.set(url, map);
  }
  return map;
}

const nodeFindSourceMap = module.findSourceMap;
(module as { findSourceMap: typeof nodeFindSourceMap }).findSourceMap = (path: string) =>
  nodeFindSourceMap(path) ?? (path.startsWith('file:') ? (mapOf(path) ?? undefined) : undefined);
// tap's bundle takes findSourceMap from node:module's ES namespace, which this updates.
module.syncBuiltinESMExports();

/** One frame as Node writes it with source maps (serializeJSStackFrame); tsc's maps name no symbols. */
function mappedFrame(map: SourceMap, site: NodeJS.CallSite): string {
  const { originalSource, originalLine, originalColumn } = map.findEntry(site.getLineNumber()! - 1, site.getColumnNumber()! - 1) as {
    originalSource?: string;
    originalLine?: number;
    originalColumn?: number;
  };
  if (originalSource === undefined || originalLine === undefined || originalColumn === undefined) return `${site}`;
  const source = originalSource.startsWith('file://') ? fileURLToPath(originalSource) : originalSource;
  const prefix = site.isAsync() ? 'async ' : site.isConstructor() ? 'new ' : '';
  const typeName = site.getTypeName();
  const name = `${typeName !== null && typeName !== 'global' ? `${typeName}.` : ''}${(site.getFunctionName() ?? site.getMethodName()) || '<anonymous>'}`;
  return `${prefix}${name} (${source}:${originalLine + 1}:${originalColumn + 1})`;
}

/** Node's own header: its errors with their code (kIsNodeError on their prototype chain), others as Error's toString. */
function header(error: Error): string {
  for (let o: object | null = error; o !== null; o = Object.getPrototypeOf(o) as object | null)
    if (Object.getOwnPropertySymbols(o).some((s) => s.description === 'kIsNodeError'))
      return `${error.name} [${(error as NodeJS.ErrnoException).code}]: ${error.message}`;
  return Error.prototype.toString.call(error);
}

Error.prepareStackTrace = (error: Error, trace: NodeJS.CallSite[]): string => {
  let text = header(error);
  for (const site of trace) {
    const file = site.getFileName();
    const map = file?.startsWith('file:') ? mapOf(file) : null;
    text += `\n    at ${map === null ? site : mappedFrame(map, site)}`;
  }
  return text;
};
