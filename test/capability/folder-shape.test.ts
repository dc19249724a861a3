// One shape for every capability folder (docs/architecture.md, "Adding a capability", the file names):
// the same file name for the same role. Read from the code: the folders are those src/capabilities.ts
// imports a capability from; the part a capability loads on use names the module it loads, and the
// module that declares its record kinds or its command table is found by what it calls. A file named
// as another name for a known role fails, naming the folder and the file.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kRepo = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const read = (path: string) => readFileSync(join(kRepo, path), 'utf8');

/** The folders under src/ that src/capabilities.ts takes a capability from. */
const kFolders = [...read('src/capabilities.ts').matchAll(/from '\.\/([\w-]+)\/capability\.js'/g)].map((m) => `src/${m[1]!}`);
/** Each folder's own source files (not its subfolders'), by name. */
const filesOf = (folder: string) =>
  readdirSync(join(kRepo, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => entry.name);

/** The module each part loaded on use is in, when it is the capability's own. */
const kPartModules: Record<string, string> = {
  routes: 'routes.ts',
  serviceRoutes: 'service-routes.ts',
  hostedRoutes: 'hosted-routes.ts',
  consoleRoutes: 'console-routes.ts',
  cli: 'cli.ts',
};

/** Names that say a known role another way, with the name the role has. */
const kOtherNames: readonly [RegExp, string][] = [
  [/-store\.ts$|storage/, 'records.ts'],
  [/^api-routes\.ts$|.-routes\.ts$/, 'routes.ts, service-routes.ts, hosted-routes.ts or console-routes.ts'],
  [/.-cli\.ts$/, 'cli.ts'],
  [/-command\.ts$/, '<subject>-commands.ts'],
  [/.-schemas\.ts$/, 'schemas.ts'],
  [/.-answers\.ts$/, 'console-answers.ts'],
  [/.-background\.ts$/, 'background.ts'],
  [/.-access\.ts$/, 'access.ts'],
  [/.-audit-actions\.ts$/, 'audit-actions.ts'],
  [/.-command-table\.ts$/, 'command-table.ts'],
];
const kRoleNames = new Set(['routes.ts', 'service-routes.ts', 'hosted-routes.ts', 'console-routes.ts', 'console-answers.ts']);

t.test('the capability folders are found', async (t) => {
  t.ok(kFolders.length >= 20, `${kFolders.length} folders`);
  t.ok(kFolders.includes('src/webhooks'));
});

t.test('a part loaded on use is loaded from the module named for it', async (t) => {
  for (const folder of kFolders) {
    const source = read(`${folder}/capability.ts`);
    for (const m of source.matchAll(/^ {2}(\w+): async \(\) => [^\n]*?import\('\.\/([\w-]+\.)js'\)/gm)) {
      const expected = kPartModules[m[1]!];
      if (expected !== undefined) t.equal(`${m[2]!}ts`, expected, `${folder}: \`${m[1]!}\` is in ${expected}`);
    }
  }
});

t.test("the module that declares a capability's record kinds is its records module", async (t) => {
  let seen = 0;
  for (const folder of kFolders) {
    const declaring = filesOf(folder).filter((name) => /\bkeyedRecords</.test(read(`${folder}/${name}`)));
    seen += declaring.length;
    const expected = declaring.length === 1 ? /^records\.ts$/ : /^[\w-]+-records\.ts$/;
    for (const name of declaring)
      t.match(name, expected, `${folder}/${name} declares record kinds: ${declaring.length === 1 ? 'records.ts' : '<kind>-records.ts'}`);
  }
  t.ok(seen >= 8, `${seen} records modules`);
});

t.test("the module that names a capability's commands is its command table", async (t) => {
  let seen = 0;
  for (const folder of kFolders)
    for (const name of filesOf(folder))
      if (/\bcommandTable\(/.test(read(`${folder}/${name}`))) {
        seen++;
        t.equal(name, 'command-table.ts', `${folder}/${name} calls commandTable`);
      }
  t.ok(seen >= 15, `${seen} command tables`);
});

t.test("a capability's audit actions are listed in its audit-actions.ts", async (t) => {
  for (const folder of kFolders)
    for (const name of filesOf(folder))
      if (/^export const k\w*AuditActions\b/m.test(read(`${folder}/${name}`)))
        t.equal(name, 'audit-actions.ts', `${folder}/${name} lists audit actions`);
});

t.test('no file is named as another name for a known role', async (t) => {
  for (const folder of kFolders)
    for (const name of filesOf(folder)) {
      const other = kRoleNames.has(name) ? undefined : kOtherNames.find(([pattern]) => pattern.test(name));
      t.equal(other, undefined, `${folder}/${name}${other === undefined ? '' : `: the role's name is ${other[1]}`}`);
    }
});

/**
 * Who writes audit entries by hand: the approvals gate, which holds a change's entries and replays them
 * with the approved request named, and the flags' commands, which move to writeAudit when src/flags is
 * free to change (issue 98 item 2).
 */
const kAuditsByHand = new Set(['src/approvals/gate.ts', 'src/approvals/request-apply.ts']);

t.test("a capability's command audits its change through writeAudit", async (t) => {
  for (const folder of kFolders)
    for (const name of filesOf(folder)) {
      const path = `${folder}/${name}`;
      if (!kAuditsByHand.has(path))
        t.notMatch(read(path), /\.appendAudit\(/, `${path} audits through writeAudit (src/actor/audit-actor.ts)`);
    }
});

// One way to act as the console: a console route asks the writer as its call's principal (the session's
// person, confined to its organisation: src/console-route/call.ts sessionPrincipal), never as a principal
// it builds itself.
t.test('a console route acts as its call.principal, never a principal of its own', async (t) => {
  let routes = 0;
  for (const folder of kFolders)
    for (const name of filesOf(folder)) {
      if (name !== 'console-routes.ts') continue;
      routes++;
      const source = read(`${folder}/${name}`);
      t.notMatch(source, /\bprincipalOf\(|\bsessionPrincipal\(|kind: 'user'|\bkOperator\b/, `${folder}/${name} builds no principal`);
    }
  t.ok(routes >= 10, `${routes} capabilities' console routes read`);
});
