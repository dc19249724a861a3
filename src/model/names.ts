// Names people tell apart: trimmed and compared without case, so "Acme" and "acme " are one name.
// Organisation, project and audience names are unique this way (flag names stay exact, as the API's).
// No imports: the store files organisations under this form of their names (src/store/record-kinds.ts),
// and every thread that opens the store loads it.

/** The form two names share when people would take them for one. */
export function foldedName(name: string): string {
  return name.trim().toLowerCase();
}
