// Which environment a request is evaluated in (src/evaluation/engine/engine.ts: stateInEnv, projectEnv,
// stateInProjectEnv): the one rule the Evaluation API and OFREP share, checked on every case.
import t from 'tap';
import {
  type FlagEntry,
  kEnvMissing,
  kEnvUnknown,
  type ProjectEntry,
  projectEnv,
  stateInEnv,
  stateInProjectEnv,
} from '../../../src/evaluation/engine/engine.js';
import type { CompiledState } from '../../../src/evaluation/engine/evaluate.js';

const own = { enabled: true } as unknown as CompiledState;
const staging = { enabled: false } as unknown as CompiledState;
const single = { state: own, envs: null } as unknown as FlagEntry;
const group = { state: null, envs: new Map([['staging', staging]]) } as unknown as FlagEntry;
const oneEnvProject = { multi: false, envs: new Set<string>() } as unknown as ProjectEntry;
const multiProject = { multi: true, envs: new Set(['staging']) } as unknown as ProjectEntry;

t.test('a single-environment flag has its own state, whatever env says', async (t) => {
  t.equal(stateInEnv(single, null), own);
  t.equal(stateInEnv(single, 'staging'), own);
  t.equal(stateInEnv(single, 'nowhere'), own);
});

t.test("a group flag needs env, one of the project's environments", async (t) => {
  t.equal(stateInEnv(group, null), kEnvMissing);
  t.equal(stateInEnv(group, 'production'), kEnvUnknown);
  t.equal(stateInEnv(group, 'staging'), staging);
});

t.test('a project: one environment ignores env; several need a known one', async (t) => {
  t.equal(projectEnv(oneEnvProject, null), null);
  t.equal(projectEnv(oneEnvProject, 'staging'), null);
  t.equal(projectEnv(multiProject, null), kEnvMissing);
  t.equal(projectEnv(multiProject, 'production'), kEnvUnknown);
  t.equal(projectEnv(multiProject, 'staging'), 'staging');
});

t.test("a project's flags in the environment it accepted", async (t) => {
  t.equal(stateInProjectEnv(single, null), own);
  t.equal(stateInProjectEnv(group, 'staging'), staging);
  t.equal(stateInProjectEnv(group, 'production'), null, 'a group flag without that environment has no state');
});
