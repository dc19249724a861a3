// What the console's code reference sections read (console-routes.ts): types only, of modules that
// declare nothing of Node's, as the browser's tsconfig checks them through
// src/web-console/api/answers.ts; test/web-console/answer-types.ts checks at build time that each route's
// answer and its type agree, both ways.
import type { CodeReference } from './schemas.js';

/** A branch's latest scan as the pages name it: where, at which commit, when it was pushed. */
export interface ScanHead {
  repository: string;
  branch: string;
  commit: string;
  pushedAt: number;
}

/**
 * GET flags/:flagId/code-refs: the project's latest scan of each pushed branch (none: never scanned), and
 * those that name the flag's key with their references to it (a computed key names no flag).
 */
export interface FlagCodeRefsView {
  scans: ScanHead[];
  branches: (ScanHead & { references: CodeReference[] })[];
}

/** Where a key that is no flag is named: the branch's scan and the reference's file and line. */
export interface MissingKeyPlace {
  repository: string;
  branch: string;
  file: string;
  line: number;
}

/**
 * GET projects/:projectId/code-refs/missing: how many branches were scanned, the keys their latest scans
 * name that are no flag of the project (each with its references' count and the first of their places),
 * and how many references have a computed key.
 */
export interface MissingKeysView {
  scans: number;
  missing: { key: string; references: number; places: MissingKeyPlace[] }[];
  unknown: number;
}
