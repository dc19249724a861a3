/** Oldest first, as every list of records the console and the APIs print (ids break ties: made in one millisecond). */
export function byCreation(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
