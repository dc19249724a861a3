// test/ mirrors src/ (docs/architecture.md): each folder of test/ is named for the folder of src/ whose
// code its files test, at every depth, so a module's tests are found by its folder's name. The few
// suites that test no one folder of src/ are the short list below, each with what it holds; a folder
// that is neither fails here, naming it.
import { readdirSync, statSync } from 'node:fs';
import t from 'tap';

const kSrc = new URL('../../../src/', import.meta.url);
const kTest = new URL('../../../test/', import.meta.url);

/** The folders of test/ that test no one folder of src/, and what each holds. */
const kCrossCutting = new Map([
  ['architecture', "the house's rules over all of src/ (its layers, this layout, the files' length)"],
  ['deploy', 'the image, the production install and the Kubernetes manifests'],
  ['docs', 'the README and docs/ held to the repository'],
  ['fixtures', 'the data files the tests read'],
  ['helpers', "what the tests share (servers, worlds, clients), and that code's own tests"],
  ['multinode', 'nodes sharing one PostgreSQL: every capability across nodes'],
  ['reliability', 'the whole server under crashes, fuzzing, load and slow clients'],
  ['scripts', "the build's and the runner's scripts (scripts/)"],
]);

/** The folders under `root`, each by its path there ('a', 'a/b'). */
function folders(root: URL): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).filter((path) => statSync(new URL(path, root)).isDirectory());
}

const srcFolders = new Set(folders(kSrc));
const testFolders = folders(kTest);

t.test('every folder of test/ is a folder of src/ or a declared cross-cutting suite', async (t) => {
  const strays = testFolders.filter((folder) => {
    const top = folder.split('/')[0];
    return !kCrossCutting.has(top) && !srcFolders.has(folder);
  });
  t.strictSame(strays, [], 'test/ folders named for no src/ folder (move them, or declare a cross-cutting suite)');
});

t.test('the cross-cutting list names only folders test/ has and src/ has not', async (t) => {
  for (const name of kCrossCutting.keys()) {
    t.ok(testFolders.includes(name), `test/${name} exists`);
    t.notOk(srcFolders.has(name), `${name} is no src/ folder: its tests mirror it instead`);
  }
});
