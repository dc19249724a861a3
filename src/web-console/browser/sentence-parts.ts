// Sentences' parts as the page draws them (audit-sentences.ts makes them): a thing by its name with its
// id beside it, a time as a time, a long value folded. The audit log and the flag page's scheduled
// changes draw theirs alike.
import type { Part } from '../../words/audit-sentences.js';
import { h, timeElement } from './dom.js';

/** Something by its name, its id kept as the tooltip and as smaller text after it (an unknown name: the id alone). */
export function named(name: string | null, id: string): HTMLElement {
  if (name === null || name === id) return h('span', {}, id);
  return h('span', { title: id }, name, ' ', h('span', { class: 'muted id' }, id));
}

/** Values longer than this are folded: their start shown, the whole a click away. */
const kFoldChars = 60;

export function partElement(part: Part): Node | Node[] {
  if (typeof part === 'string') return document.createTextNode(part);
  if ('at' in part) return timeElement(part.at);
  if ('id' in part) return named(part.name, part.id);
  if (part.text.length <= kFoldChars) return part.value.flatMap(partElement);
  return h(
    'details',
    { class: 'folded' },
    h('summary', {}, `${part.text.slice(0, kFoldChars - 20)}… (${part.text.length} characters)`),
    h('div', {}, part.value.flatMap(partElement)),
  );
}
