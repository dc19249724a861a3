// A fragment's making or change prepared before the writer's transaction (issue 96, item 8). Everything
// in it that grows with the rule's size (the body parsed, the rule checked as flagd would load it, each
// flag that uses it checked with it compiled in, the project's weight counted) is done on the front
// end's side thread (src/side-work), which reads the store as the writer would; the writer is handed
// what was found and the rule as the compact JSON it was checked as, and verifies only that the project
// did not change since (fragment-commands.ts, preparedPut). A project changed in between (a race) is
// prepared again, twice at most, then answered 409: never applied on checks of another state.
import { FlagwireError } from '../errors.js';
import type { ReceivedBody } from '../model/request-body.js';
import { type SideThread, sideJob } from '../side-work/side-thread.js';
import type { StoreReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import type { WriterCommand } from '../writer/command.js';
import { type Fragment, listFragments } from '../flags/records/fragment-records.js';
import {
  checkFragmentPut,
  type FragmentCheck,
  type FragmentCreateInput,
  type FragmentUpdateInput,
  readCreateBody,
  readUpdateBody,
  takenNameProblems,
} from './fragment-commands.js';

/** A fragment's making or change as prepared: what the writer is handed instead of the body. */
export interface PreparedFragmentPut {
  /** The project's newest audit entry when it was read (StoreReader.lastAuditSeq): what the writer compares. */
  at: number;
  /** The fragment's name (a making's, from its body). */
  name: string;
  /** What the checks found. */
  check: FragmentCheck;
  /**
   * For a change: the rule as compact JSON, written from the value checked; empty otherwise. A string, not
   * its UTF-8 bytes: it crosses threads as a copy either way, and the writer parses it without decoding it.
   */
  rule: string;
}

/** The side thread's job: `name` null for a making (its name is in the body). */
export interface FragmentPutJob {
  projectId: string;
  name: string | null;
  received: ReceivedBody;
}

/**
 * The side thread's job (kFragmentPutJob): the body read and checked against the project as
 * stored now. Null where the writer answers without the rule's checks (a body refused before its rule is
 * read, a change of no such fragment): it then reads the body itself, as it always did.
 */
export function prepareFragmentPut(r: StoreReader, job: FragmentPutJob): PreparedFragmentPut | null {
  const at = r.lastAuditSeq(job.projectId);
  const current = listFragments(r, job.projectId);
  let name: string;
  let rule: Record<string, unknown>;
  try {
    if (job.name === null) ({ name, rule } = readCreateBody(job.received));
    else [name, rule] = [job.name, readUpdateBody(job.received)];
  } catch (err) {
    if (err instanceof FlagwireError) return null;
    throw err;
  }
  const exists = current.some((f) => f.name === name);
  if (job.name !== null && !exists) return null;
  const check: FragmentCheck =
    job.name === null && exists
      ? { kind: 'refused', problems: takenNameProblems(name, rule) }
      : checkFragmentPut(r, job.projectId, current, name, rule);
  return { at, name, check, rule: check.kind === 'change' ? JSON.stringify(rule) : '' };
}

/** prepareFragmentPut, as the side thread runs it. */
export const kFragmentPutJob = sideJob<FragmentPutJob, PreparedFragmentPut | null>(import.meta.url, 'prepareFragmentPut');

/** Times a change is prepared again when its project changed before the writer took it. */
const kPrepareTries = 3;

/**
 * A fragment made or changed by `command` for the Management API or the console: prepared on the side
 * thread, then handed to the writer; prepared again if the project changed in between. `received` is
 * copied to the side thread, not moved: the writer reads it where nothing was prepared (prepareFragmentPut's
 * null, or a side thread that failed).
 */
export async function putPrepared<C extends FragmentCreateInput | FragmentUpdateInput>(
  deps: { sideThread: SideThread; writer: WriterClient },
  command: WriterCommand<C, Fragment>,
  input: Omit<C, 'received' | 'prepared'>,
  received: ReceivedBody,
  release: (() => void) | null,
): Promise<Fragment> {
  const job: FragmentPutJob = { projectId: input.projectId, name: 'name' in input ? (input.name as string) : null, received };
  let handedOver = false;
  try {
    for (let tries = 1; ; tries++) {
      // A side thread that failed (or was closed by a shutdown) leaves the checks to the writer, as before.
      const prepared = await deps.sideThread.run(kFragmentPutJob, job).then(
        ({ value }) => value,
        () => null,
      );
      if (prepared === null) {
        handedOver = true;
        return await deps.writer.call(command, { ...input, received } as C, release);
      }
      try {
        return await deps.writer.call(command, { ...input, prepared } as C, null);
      } catch (err) {
        if (tries < kPrepareTries && err instanceof FlagwireError && err.code === 'REVISION_CONFLICT') continue;
        throw err;
      }
    }
  } finally {
    if (!handedOver) release?.();
  }
}
