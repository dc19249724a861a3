// CommonJS packages loaded the first time they are used instead of when their importer loads. Loading
// one costs the thread 70-130 ms of CPU (pg, nodemailer), and most processes never use them: a node
// without PostgreSQL, a server without SMTP, every command-line command. Each server start paid that in its
// main and writer threads.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function that returns package `name`, loading it on its first call. */
export function loadOnUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
