// A comparison's operator change and its value controls in the rule builder (rule-builder.ts): what an
// operator keeps of the value when it changes, and the controls each operator's value takes (a typed
// value, a list of lines, a version comparison, a number).
import type { Compare, CompareOp, Scalar, SemVerOp } from './rule-model.js';
import { kSemVerOps } from './rule-model.js';
import { choice, lines, type RuleEditing, textBox } from './rule-controls.js';

type ValueType = 'text' | 'number' | 'boolean';

const typeOf = (v: Scalar): ValueType => (typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text');
/** A typed value as the type chosen: a number that is not one stays NaN, which the builder's checks name. */
const asType = (text: string, type: ValueType): Scalar =>
  type === 'number' ? (text.trim() === '' ? Number.NaN : Number(text)) : type === 'boolean' ? text === 'true' : text;
const shown = (v: Scalar): string => (typeof v === 'number' && Number.isNaN(v) ? '' : String(v));

export const newCompare = (): Compare => ({ kind: 'compare', attribute: '', op: '==', value: '' });

/** A new condition with `op`, keeping the attribute and what of the value still fits. */
export function withOp(old: Compare, op: CompareOp): Compare {
  const { attribute } = old;
  const text = Array.isArray(old.value) ? String(old.value[0] ?? '') : shown(old.value);
  switch (op) {
    case '==':
    case '!=':
      return { kind: 'compare', attribute, op, value: Array.isArray(old.value) ? (old.value[0] ?? '') : old.value };
    case 'in':
      return { kind: 'compare', attribute, op, value: Array.isArray(old.value) ? old.value : [old.value] };
    case 'starts_with':
    case 'ends_with':
      return { kind: 'compare', attribute, op, value: text };
    case 'sem_ver':
      return { kind: 'compare', attribute, op, semVer: '>=', value: text };
    default:
      return { kind: 'compare', attribute, op, value: asType(text, 'number') as number };
  }
}

/** The controls of `c`'s value at `place` ("Branch 1 condition 1"); each edit writes into `c`. */
export function valueControls(ed: RuleEditing, c: Compare, place: string): HTMLElement[] {
  const set = (value: Compare['value']) => {
    (c as { value: Compare['value'] }).value = value;
  };
  switch (c.op) {
    case '==':
    case '!=': {
      const type = typeOf(c.value);
      const typeChoice = choice(
        ed,
        [
          ['text', 'text'],
          ['number', 'number'],
          ['boolean', 'true/false'],
        ],
        type,
        `${place} value type`,
        (t) => set(t === 'boolean' ? true : asType(shown(c.value), t as ValueType)),
      );
      const value =
        type === 'boolean'
          ? choice(
              ed,
              [
                ['true', 'true'],
                ['false', 'false'],
              ],
              String(c.value),
              `${place} value`,
              (v) => set(v === 'true'),
            )
          : textBox(ed, shown(c.value), `${place} value`, (v) => set(asType(v, type)));
      return [value, typeChoice];
    }
    case 'in': {
      const type = typeOf(c.value[0] ?? '');
      const list = lines(ed, c.value.map(shown).join('\n'), Math.max(2, c.value.length), `${place} values, one a line`, (text) =>
        set(
          text
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => asType(line, type)),
        ),
      );
      const typeChoice = choice(
        ed,
        [
          ['text', 'text'],
          ['number', 'numbers'],
        ],
        type,
        `${place} values type`,
        (t) => set(c.value.map((v) => asType(shown(v), t as ValueType))),
      );
      return [list, typeChoice];
    }
    case 'sem_ver':
      return [
        choice(
          ed,
          kSemVerOps.map((op) => [op, op]),
          c.semVer,
          `${place} version comparison`,
          (op) => {
            (c as { semVer: SemVerOp }).semVer = op as SemVerOp;
          },
        ),
        textBox(ed, c.value, `${place} version`, (v) => set(v)),
      ];
    case 'starts_with':
    case 'ends_with':
      return [textBox(ed, c.value, `${place} value`, (v) => set(v))];
    default:
      return [textBox(ed, shown(c.value), `${place} number`, (v) => set(asType(v, 'number')))];
  }
}
