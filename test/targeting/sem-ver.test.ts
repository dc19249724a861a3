// Version reading and ordering as flagd-core reads them (node-semver's strict parse after one v/V is
// dropped, "1" and "1.2" padded); the differential test checks the same against flagd-core itself.
import t from 'tap';
import { compareVersions, parseVersion, semVer } from '../../src/targeting/sem-ver.js';

t.test('what parses, and to what', async (t) => {
  const cases: [unknown, string | null][] = [
    ['1.2.3', '1.2.3'],
    ['v1.2.3', '1.2.3'],
    ['V1.2.3', '1.2.3'],
    ['vv1.2.3', '1.2.3'],
    [' 1.2.3 ', '1.2.3'],
    ['1.2.3-rc.1+build.7', '1.2.3-rc.1'],
    ['1', '1.0.0'],
    ['1.2', '1.2.0'],
    [2, '2.0.0'],
    [1.5, '1.5.0'],
    ['01.2.3', null],
    ['1.2.3.4', null],
    ['1.2.3-01', null],
    ['myVersion_1', null],
    ['007', null],
    ['9007199254740992.0.0', null],
    [null, null],
    [['1.2.3'], '1.2.3'],
    [`1.2.3-${'a'.repeat(251)}`, null],
  ];
  for (const [input, text] of cases) t.equal(parseVersion(input)?.text ?? null, text, JSON.stringify(input));
});

t.test('precedence: prereleases before releases, numeric identifiers numerically, build ignored', async (t) => {
  const ordered = [
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
  ];
  for (let i = 0; i + 1 < ordered.length; i++) {
    t.equal(compareVersions(parseVersion(ordered[i])!, parseVersion(ordered[i + 1])!), -1, `${ordered[i]} < ${ordered[i + 1]}`);
    t.equal(compareVersions(parseVersion(ordered[i + 1])!, parseVersion(ordered[i])!), 1);
  }
  t.equal(compareVersions(parseVersion('1.0.0+a')!, parseVersion('1.0.0+b')!), 0);
});

t.test('operators, and null for what is not a comparison', async (t) => {
  t.equal(semVer(['1.2.3', '^', '1.9.0']), true);
  t.equal(semVer(['1.2.3', '~', '1.3.0']), false);
  t.equal(semVer(['2.0.0', '!=', 'v2']), false);
  t.equal(semVer(['1.2.3', '>>', '1.0.0']), null);
  t.equal(semVer(['x', '=', '1.0.0']), null);
  t.equal(semVer(['1.0.0', '=']), null);
});
