// The house's layers (docs/architecture.md, "Capabilities": the layers): the capabilities stand on the mechanisms below
// them, and only the parts that assemble the list of capabilities stand on the capabilities. A module
// below the list (one that is no capability's, in a place that does not import src/capabilities.ts or
// src/all-routes.ts, directly or through a place that does) imports no capability's module, a type
// included: what a mechanism needs of a capability's rules lives below it, as src/unleash/rules holds
// Unleash's model for the evaluation engine and src/flags/records the flags' records and their reads. In a
// place above the list, a module that reaches no assembler (the server's listen) is a mechanism and names
// no capability either, but in the places that assemble module by module (kAssembledByModule). The
// capabilities' folders are read from the declarations src/capabilities.ts lists, the imports from the
// sources with TypeScript's own scanner. The store names no file or table a capability declares as its
// side storage (side-storage.ts): their key layouts and SQL are in the capability's folder.
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import t from 'tap';
import { kCapabilities } from '../../src/capabilities.js';
import type { Capability } from '../../src/capability/capability.js';
import { type TypeScript, ts } from '../helpers/typescript.js';

const kSrc = new URL('../../../src/', import.meta.url);
const kList = 'capabilities.ts';
/** The modules that assemble the list; a place that imports one of them stands above the capabilities. */
const kAssemblers = [kList, 'all-routes.ts'];

/** Every TypeScript module under src/, by its path there. */
const kModules = (readdirSync(kSrc, { recursive: true }) as string[])
  .map((path) => path.split('\\').join('/'))
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'));

/** The module `specifier` names from `module` (both paths under src/), or null for a package or node: module. */
function resolved(module: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return posix.join(posix.dirname(module), specifier).replace(/\.js$/, '.ts');
}

/** What `module` imports of src/: static imports, re-exports, types and import() calls alike. */
function importsOf(module: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(new URL(module, kSrc), 'utf8'), true, true);
  return importedFiles.flatMap(({ fileName }) => resolved(module, fileName) ?? []);
}

/**
 * The sub-folders that are places of their own: the lower or upper part of a concept, kept under its
 * folder (flags/records below the flags capability, evaluation/engine below evaluation, writer/thread
 * above the writer's client). Every other sub-folder is part of its folder's place.
 */
const kOwnPlaces = new Set(['records', 'rules', 'engine', 'thread', 'command']);

/** A module's place: its folder under src/ (or its own sub-folder), or the module itself at src/'s top. */
function placeOf(module: string): string {
  const [top, sub, rest] = module.split('/');
  return rest !== undefined && kOwnPlaces.has(sub!) ? `${top}/${sub}` : top!;
}

/** The folders of the capabilities src/capabilities.ts lists in kCapabilities, in its order. */
function capabilityFolders(): string[] {
  const source = ts.createSourceFile(kList, readFileSync(new URL(kList, kSrc), 'utf8'), ts.ScriptTarget.Latest);
  const from = new Map<string, string>();
  let listed: readonly TypeScript.Expression[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings))
        for (const element of bindings.elements) from.set(element.name.text, statement.moduleSpecifier.text);
    }
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name) || declaration.name.text !== 'kCapabilities') continue;
        let value = declaration.initializer;
        while (value !== undefined && (ts.isSatisfiesExpression(value) || ts.isAsExpression(value))) value = value.expression;
        if (value !== undefined && ts.isArrayLiteralExpression(value)) listed = value.elements;
      }
  }
  return listed.map((element) => {
    const specifier = ts.isIdentifier(element) ? from.get(element.text) : undefined;
    if (specifier === undefined) throw new Error(`kCapabilities lists ${element.getText(source)}, not an imported name`);
    return placeOf(resolved(kList, specifier)!);
  });
}

const kCapabilityFolders = new Set(capabilityFolders());

/** The places that import one of the list's assemblers, directly or through another such place. */
function placesAbove(): Set<string> {
  const above = new Set(kAssemblers);
  const importedBy = new Map<string, Set<string>>();
  for (const module of kModules) {
    const place = placeOf(module);
    const places = importedBy.get(place) ?? new Set();
    for (const imported of importsOf(module)) places.add(placeOf(imported));
    importedBy.set(place, places);
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [place, imported] of importedBy) {
      if (above.has(place) || kCapabilityFolders.has(place) || ![...imported].some((p) => above.has(p))) continue;
      above.add(place);
      grew = true;
    }
  }
  return above;
}

const kAbove = placesAbove();

/**
 * The places above the list whose modules assemble it module by module: their modules that import a
 * capability's (the console's answers and views name the capabilities' shapes, its sign-in their session
 * commands; the demo's seed names the commands it runs) are parts of what the place assembles, though
 * they import no assembler themselves. Every other place above keeps the finer rule below.
 */
const kAssembledByModule = new Map([
  ['web-console', "the console's answers, views and sign-in name the capabilities' shapes and commands"],
  ['writer/thread', "the demo's seed names the commands it runs"],
]);

/**
 * The modules that import one of the list's assemblers, directly or through other modules (a capability's
 * own modules apart: one that imports the list makes no importer of it an assembler). In a place above
 * the list, a module that is not one of them is a mechanism of that place (the server's listen, the
 * command line's settings check) and, like a place below, names no capability.
 */
function modulesAbove(): Set<string> {
  const above = new Set(kAssemblers);
  const imports = new Map(kModules.map((module) => [module, importsOf(module)]));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [module, imported] of imports) {
      if (above.has(module) || kCapabilityFolders.has(placeOf(module)) || !imported.some((m) => above.has(m))) continue;
      above.add(module);
      grew = true;
    }
  }
  return above;
}

const kModulesAbove = modulesAbove();

/**
 * Every import of a capability's module from a module of another place, as `from -> to`: from a place
 * below the list, from a module above it, and from a mechanism of a place above (modulesAbove).
 */
function crossings(): { below: string[]; above: string[]; mechanisms: string[] } {
  const below: string[] = [];
  const above: string[] = [];
  const mechanisms: string[] = [];
  for (const module of kModules) {
    const place = placeOf(module);
    if (kCapabilityFolders.has(place)) continue;
    for (const imported of importsOf(module)) {
      if (!kCapabilityFolders.has(placeOf(imported))) continue;
      const crossing = `${module} -> ${imported}`;
      if (!kAbove.has(place)) below.push(crossing);
      else if (kModulesAbove.has(module) || kAssembledByModule.has(place)) above.push(crossing);
      else mechanisms.push(crossing);
    }
  }
  return { below, above, mechanisms };
}

t.test("the capabilities' folders are read from src/capabilities.ts's list", async (t) => {
  t.equal(kCapabilityFolders.size, kCapabilities.length, 'one folder for each capability listed');
  for (const folder of kCapabilityFolders) t.ok(kModules.includes(`${folder}/capability.ts`), `${folder} declares its capability`);
  t.ok(kCapabilityFolders.has('unleash') && kCapabilityFolders.has('flags'), 'unleash and flags among them');
});

t.test('the places above the list are those that assemble it', async (t) => {
  for (const place of ['server', 'cli', 'writer/thread', 'web-console', 'api', 'openapi'])
    t.ok(kAbove.has(place), `${place} stands above the capabilities`);
  for (const place of [
    'store',
    'model',
    'model/records',
    'routes',
    'writer',
    'evaluation/engine',
    'http',
    'targeting',
    'unleash/rules',
    'flags/records',
    'ofrep',
  ])
    t.notOk(kAbove.has(place), `${place} stands below them`);
});

t.test("no module below the list imports a capability's module", async (t) => {
  const { below, above } = crossings();
  // The scan sees a crossing where one stands: the front end builds Unleash's front-end API's routes.
  t.ok(above.includes('server/frontend.ts -> unleash/hosted-routes.ts'), 'an import from above is seen');
  t.strictSame(below, [], 'none: what a mechanism needs of a capability belongs below it');
});

t.test("no mechanism of a place above the list imports a capability's module", async (t) => {
  for (const module of ['server/start.ts', 'server/frontend.ts', 'cli/commands.ts'])
    t.ok(kModulesAbove.has(module), `${module} assembles the list`);
  for (const module of ['server/listen.ts', 'server/logger.ts', 'cli/serve-config.ts'])
    t.notOk(kModulesAbove.has(module), `${module} does not: a mechanism of its place`);
  const { above, mechanisms } = crossings();
  for (const [place, why] of kAssembledByModule)
    t.ok(
      above.some((crossing) => crossing.startsWith(`${place}/`) && !kModulesAbove.has(crossing.split(' -> ')[0]!)),
      `${place} still assembles by module (${why})`,
    );
  // What start-up tries or serves of a capability it reads from the declarations (the ports: the
  // background work's listensOn), never by naming the capability's module.
  t.strictSame(mechanisms, [], 'none: a mechanism reads what it needs of the capabilities from their declarations');
});

t.test("the store names no capability's side storage: its files and tables are the capability's own code's", async (t) => {
  const declared = (kCapabilities as readonly Capability[]).flatMap((c) => [
    ...(c.sideFiles ?? []).map((side) => side.file),
    ...(c.pgMigrations ?? []).flatMap((m) => [...m.sql.matchAll(/CREATE (?:TABLE|SEQUENCE|INDEX) (\w+)/g)].map((found) => found[1]!)),
  ]);
  t.ok(declared.includes('tally.mdb') && declared.includes('flagwire_tally_raw'), "the events' tally file and tables among them");
  const named = kModules
    .filter((module) => placeOf(module) === 'store')
    .flatMap((module) => {
      const source = readFileSync(new URL(module, kSrc), 'utf8');
      return declared.filter((name) => source.includes(name)).map((name) => `${module}: ${name}`);
    });
  t.strictSame(named, [], 'none: the store opens a declared file and applies declared migrations by their declarations');
});
