// A writer command as a value: its name (what crosses to the writer thread) and its function (what the
// writer runs in the transaction). Callers hold the value itself, so the input and output types come
// from the command, and no list of every command's name is needed to type a call.
import type { StoreWriter } from '../store/interfaces.js';

/** Runs in the writer's transaction: (the transaction, the input, the time it is applied). */
export type CommandFn<I, O> = (w: StoreWriter, input: I, now: number) => O;

export interface WriterCommand<I, O> {
  readonly name: string;
  readonly run: CommandFn<I, O>;
}

/** Any writer command: what a table holds (the writer looks one up by name and gives it what was sent). */
// biome-ignore lint/suspicious/noExplicitAny: a table holds commands of every input type; callers use the typed values.
export type AnyCommand = WriterCommand<any, unknown>;

type CommandTableOf<T> = {
  readonly [K in keyof T]: T[K] extends (w: StoreWriter, input: infer I, now: number) => infer O ? WriterCommand<I, O> : never;
};

/**
 * A capability's commands, named by their keys: `commandTable({ webhookCreate })` is the command
 * `webhookCreate` running the function webhookCreate. The key is the name on the wire, written once.
 */
export function commandTable<T extends Record<string, CommandFn<never, unknown>>>(fns: T): CommandTableOf<T> {
  return Object.fromEntries(Object.entries(fns).map(([name, run]) => [name, { name, run }])) as CommandTableOf<T>;
}
