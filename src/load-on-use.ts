// CommonJS packages loaded the first time they are used instead of when their importer loads. Loading
// one (pg, nodemailer) is a large part of a thread's start (bench/RESULTS.md, Costs behind the code's
// choices), and most processes never use them: a node
// without PostgreSQL, a server without SMTP, every command-line command. Each server start paid that in its
// main and writer threads.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function that returns package `name`, loading it on its first call (through `around`, when given). */
export function loadOnUse<T>(name: string, around: (load: () => T) => T = (load) => load()): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= around(() => require(name) as T));
}

/**
 * An en-US number format made at its first use: the first Intl.NumberFormat of a thread loads ICU's
 * locale data, which every thread that imported a module holding one paid at its start
 * (experiment verdicts, release guards), though few ever format a figure.
 */
export function numberFormatOnUse(options?: Intl.NumberFormatOptions): { format(value: number): string } {
  let made: Intl.NumberFormat | undefined;
  return {
    format(value) {
      made ??= new Intl.NumberFormat('en-US', options);
      return made.format(value);
    },
  };
}
