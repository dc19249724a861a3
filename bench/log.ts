// Progress lines of a bench run go to stderr; stdout carries the result table.

export function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}
