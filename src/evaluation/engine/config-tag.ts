// A project's configuration tag: one home for the fingerprint that both the OFREP bulk ETag (eval
// workers, src/ofrep/evaluate.ts) and the OFREP change stream's `refetchEvaluation` events (main thread,
// src/stream/change-feed.ts) carry, so a provider can compare the two.
import type { Org } from '../../model/accounts.js';
import type { Project } from '../../model/projects.js';
import { murmur3x86_32 } from '../../bytes/murmur3.js';

interface Versioned {
  readonly id: string;
  readonly updatedAt: number;
}

/**
 * Fingerprint of everything that decides a project's answers: its environments, every flag's id and
 * version, every audience's version, the organisation's plan, and the version of its shared fragments
 * (src/fragments; `fragmentsAt` undefined for a project that never had any, whose tag is as before
 * fragments existed). 8 hex digits.
 */
export function projectConfigTag(
  project: Project,
  flags: Iterable<Versioned>,
  audiences: Iterable<Versioned>,
  org: Org | null,
  fragmentsAt?: number,
): string {
  const parts = [project.id, project.environments.join(','), org === null ? '-' : `${org.plan}:${org.trialEndsAt}:${org.standing}`];
  for (const flag of flags) parts.push(`${flag.id}@${flag.updatedAt}`);
  for (const audience of audiences) parts.push(`${audience.id}@${audience.updatedAt}`);
  if (fragmentsAt !== undefined) parts.push(`fragments@${fragmentsAt}`);
  return murmur3x86_32(Buffer.from(parts.join('|')))
    .toString(16)
    .padStart(8, '0');
}
