// Changes to a file's text by the index ranges of its parse, made back to front: what a cleanup rewrites
// and what it removes.
import type { SyntaxNode } from './grammars.js';

/** One change to a file's text: [start, end) of the text replaced by `text`. */
export interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** A statement removed, with its line when it stands alone on it. */
export function removal(text: string, node: SyntaxNode): Edit {
  const lineStart = text.lastIndexOf('\n', node.startIndex - 1) + 1;
  const lineEnd = text.indexOf('\n', node.endIndex);
  const alone =
    text.slice(lineStart, node.startIndex).trim() === '' && text.slice(node.endIndex, lineEnd < 0 ? text.length : lineEnd).trim() === '';
  if (!alone) return { start: node.startIndex, end: node.endIndex, text: '' };
  return { start: lineStart, end: lineEnd < 0 ? text.length : lineEnd + 1, text: '' };
}

/** The text with the edits made, back to front; null when two overlap. */
export function applyEdits(text: string, edits: readonly Edit[]): string | null {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.start < sorted[i - 1]!.end) return null;
  let out = text;
  for (const edit of sorted.reverse()) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}
