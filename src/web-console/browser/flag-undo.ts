// Undo of the last change made to a flag (on its page, or a toggle of the flag list): the status line that says it was saved offers
// Undo, which sends the values the page showed before as one PATCH (the API's own, so the undo is
// checked and audited as any change) and says so.
import { api, say, sayWithAction } from './dom.js';
import type { FlatState } from './views.js';

/** The fields a change set, each with the value it had before the change (as the page read it). */
export type PreviousValues = Partial<Record<keyof FlatState, unknown>>;

export function savedWithUndo(
  message: string,
  flag: { id: string; name: string },
  env: string | null,
  previous: PreviousValues,
  reload: () => Promise<void>,
): void {
  const where = env === null ? '' : ` in ${env}`;
  sayWithAction(message, 'Undo', async () => {
    const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
    const result = await api<{ changed: boolean }>('PATCH', `flags/${flag.id}${query}`, previous);
    await reload();
    say(
      result.changed
        ? `Undone: ${flag.name}${where} has its previous ${Object.keys(previous).join(', ')} again.`
        : `Nothing to undo: ${flag.name}${where} already had its previous values.`,
    );
  });
}
