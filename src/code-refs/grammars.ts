// The tree-sitter runtime (web-tree-sitter) and the grammars (tree-sitter-wasms), both WebAssembly from
// npm, loaded the first time a scan parses a file of their language: a process that never scans (a
// server outside the code references' routes, any other command) loads neither, and a scan loads only
// the grammars of the languages it meets.
import { createRequire } from 'node:module';
import type TreeSitter from 'web-tree-sitter';
import type { Language } from './languages.js';

export type SyntaxNode = TreeSitter.SyntaxNode;
export type Tree = TreeSitter.Tree;

const require = createRequire(import.meta.url);

let runtime: Promise<typeof TreeSitter> | undefined;
/** One parser per grammar: a parse runs to its end synchronously, so a parser is never shared by two at once. */
const parsers = new Map<string, Promise<TreeSitter>>();

/**
 * The runtime, kept for the whole process: web-tree-sitter's init replaces the package's module.exports
 * with its Emscripten module, so a second copy of this file in the process (a bundle beside the modules)
 * that required the package after the first init would get no Parser.
 */
const kRuntimeSlot = Symbol.for('flagwire.code-refs.web-tree-sitter');

function loadRuntime(): Promise<typeof TreeSitter> {
  const shared = globalThis as { [kRuntimeSlot]?: Promise<typeof TreeSitter> };
  runtime ??= shared[kRuntimeSlot] ??= (async () => {
    const Parser = require('web-tree-sitter') as typeof TreeSitter;
    await Parser.init();
    return Parser;
  })();
  return runtime;
}

/** The parser of `language`, its grammar loaded once per process. */
export function parserFor(language: Language): Promise<TreeSitter> {
  let parser = parsers.get(language.grammar);
  if (parser === undefined) {
    parser = (async () => {
      const Parser = await loadRuntime();
      const made = new Parser();
      made.setLanguage(await Parser.Language.load(require.resolve(`tree-sitter-wasms/out/tree-sitter-${language.grammar}.wasm`)));
      return made;
    })();
    parsers.set(language.grammar, parser);
  }
  return parser;
}
