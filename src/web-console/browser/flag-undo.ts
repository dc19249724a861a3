// Undo of the last change made to a flag (on its page, or a toggle of the flag list): the status line
// that says it was saved offers Undo, which sends the values the page showed before through the same
// route the change took (the API's own, so the undo is checked and audited as any change) and says so.
import { api, say, sayWithAction } from './dom.js';
import type { FlatState } from './views.js';

/** The fields a change set, each with the value it had before the change (as the page read it). */
export type PreviousValues = Partial<Record<keyof FlatState, unknown>>;

/** Says `message` with Undo; `undo` puts the previous values back and returns what to say then. */
function offerUndo(message: string, undo: () => Promise<string>, reload: () => Promise<void>): void {
  sayWithAction(message, 'Undo', async () => {
    const undone = await undo();
    await reload();
    say(undone);
  });
}

/** A change of the flag's state (in `env`, or flag-wide): Undo is one PATCH of the fields it set. */
export function savedWithUndo(
  message: string,
  flag: { id: string; name: string },
  env: string | null,
  previous: PreviousValues,
  reload: () => Promise<void>,
): void {
  const where = env === null ? '' : ` in ${env}`;
  offerUndo(
    message,
    async () => {
      const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
      const result = await api<{ changed: boolean }>('PATCH', `flags/${flag.id}${query}`, previous);
      return result.changed
        ? `Undone: ${flag.name}${where} has its previous ${Object.keys(previous).join(', ')} again.`
        : `Nothing to undo: ${flag.name}${where} already had its previous values.`;
    },
    reload,
  );
}

/**
 * A setting of the flag saved from its own form (name, description, tags, flag-wide cohorts, each a
 * route of its own under flags/:id/): Undo posts the form's body as the page read it before.
 */
export function settingSavedWithUndo(
  setting: string,
  flag: { id: string; name: string },
  route: string,
  previous: Record<string, unknown>,
  reload: () => Promise<void>,
): void {
  offerUndo(
    `${setting} saved.`,
    async () => {
      await api('POST', `flags/${flag.id}/${route}`, previous);
      return `Undone: ${setting.toLowerCase()} of ${flag.name} put back.`;
    },
    reload,
  );
}
