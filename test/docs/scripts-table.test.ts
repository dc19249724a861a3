// docs/architecture.md's Building section says in one table what each file of scripts/ is for: a script
// added without a row, or a row left behind by a script removed, fails here.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';

const kRepo = new URL('../../../', import.meta.url);

/** The first cell of each row of the table in the Building section: a script's file name, in backticks. */
function tableScripts(page: string): string[] {
  const section = page.split(/^## /m).find((part) => part.startsWith('Building\n'));
  if (section === undefined) return [];
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map(([, name]) => name as string);
}

const kOnDisk = readdirSync(new URL('scripts/', kRepo)).sort();
const kListed = tableScripts(readFileSync(new URL('docs/architecture.md', kRepo), 'utf8'));

t.ok(kListed.length > 0, "docs/architecture.md's Building section has the scripts table");
t.same(
  kOnDisk.filter((name) => !kListed.includes(name)),
  [],
  'every file in scripts/ has a row in the table',
);
t.same(
  kListed.filter((name) => !kOnDisk.includes(name)),
  [],
  'every row of the table names a file in scripts/',
);
t.equal(new Set(kListed).size, kListed.length, 'no script has two rows');
