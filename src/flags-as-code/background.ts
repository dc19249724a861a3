// Flags as code's background work: with --flags-file, the node follows that file (file-follower.ts).
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { kOperator } from '../actor/audit-actor.js';
import { ConfigError } from '../config.js';
import { jsonBody } from '../model/request-body.js';
import { kFlagsAsCodeCommands } from './command-table.js';
import { FileFollower } from './file-follower.js';
import { getProject } from '../model/records/project-records.js';

/** The follower of the flag file, started (it has applied the file as it is now); null without one. */
export async function followFlagsFile({ config, store, writer, log }: NodeServices): Promise<RunningWork | null> {
  if (config.flagsFile === null) return null;
  if (getProject(store, config.flagsFile.projectId) === undefined)
    throw new ConfigError(
      'FLAGWIRE_FLAGS_PROJECT (--flags-project)',
      `no project ${config.flagsFile.projectId} exists (\`flagwire project list\` shows them)`,
    );
  const apply = (file: { projectId: string }, text: string) =>
    writer.call(kFlagsAsCodeCommands.flagsApply, {
      principal: kOperator,
      projectId: file.projectId,
      received: jsonBody(text),
      prune: true,
      ifProjectRevision: null,
      ifPlan: null,
    });
  const follower = new FileFollower(config.flagsFile, apply, log);
  await follower.start();
  return { stop: () => follower.stop() };
}
