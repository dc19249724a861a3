// The shapes code references take (a scan's findings, a push, the answers), as TypeBox values: the
// single source of their types and of the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';

/** What a push may carry: a push is one request body (1 MiB at most), and these bound what it holds. */
export const kCodeRefLimits = {
  references: 5000,
  pathLength: 1024,
  keyLength: 256,
  contextLines: 5,
  lineLength: 240,
  nameLength: 256,
} as const;

const kLine = Type.String({ maxLength: kCodeRefLimits.lineLength });

export const CodeReference = Type.Object(
  {
    file: Type.String({
      minLength: 1,
      maxLength: kCodeRefLimits.pathLength,
      description: "The file's path from the scanned folder, with / between parts",
    }),
    line: Type.Integer({ minimum: 1, description: 'The line of the call, from 1' }),
    column: Type.Integer({ minimum: 1, description: "The key argument's column, from 1" }),
    language: Type.String({ maxLength: 32 }),
    sdk: Type.Union([Type.Literal('openfeature'), Type.Literal('unleash'), Type.Literal('flagwire')], {
      description: "Whose call it is: OpenFeature's client, Unleash's SDK or Flagwire's provider called directly",
    }),
    method: Type.String({ maxLength: 64, description: 'The method called (getBooleanValue, is_enabled, ...)' }),
    kind: Type.Union([Type.Literal('literal'), Type.Literal('constant'), Type.Literal('alias'), Type.Literal('unknown')], {
      description:
        'How the key was found: a string literal at the call, a constant bound to one in the same file, a name bound to such a constant, or unknown (computed: key is null)',
    }),
    key: Type.Union([Type.String({ minLength: 1, maxLength: kCodeRefLimits.keyLength }), Type.Null()], {
      description: 'The flag key; null when the key is computed (kind unknown)',
    }),
    expression: Type.String({ maxLength: kCodeRefLimits.lineLength, description: 'The key argument as written' }),
    context: Type.Array(kLine, { maxItems: kCodeRefLimits.contextLines, description: 'The lines around the call' }),
    contextStart: Type.Integer({ minimum: 1, description: "The first context line's number" }),
  },
  { additionalProperties: false },
);
export type CodeReference = Static<typeof CodeReference>;

/** The body of POST /api/v1/code-refs: one scan of one branch at one commit. */
export const CodeRefsPush = Type.Object(
  {
    repository: Type.String({
      minLength: 1,
      maxLength: kCodeRefLimits.nameLength,
      description: 'The repository scanned (owner/name, a URL, any stable name)',
    }),
    branch: Type.String({ minLength: 1, maxLength: kCodeRefLimits.nameLength }),
    commit: Type.String({ minLength: 1, maxLength: 128, description: 'The commit scanned' }),
    references: Type.Array(CodeReference, {
      maxItems: kCodeRefLimits.references,
      'x-error': `must be an array of at most ${kCodeRefLimits.references} references`,
    }),
  },
  { additionalProperties: false },
);
export type CodeRefsPush = Static<typeof CodeRefsPush>;

export const CodeRefsPushed = Type.Object({
  repository: Type.String(),
  branch: Type.String(),
  commit: Type.String(),
  pushedAt: Type.Integer(),
  references: Type.Integer({ description: 'How many references were stored' }),
  flags: Type.Integer({ description: 'How many distinct keys they name' }),
});
export type CodeRefsPushed = Static<typeof CodeRefsPushed>;

const BranchRefs = Type.Object({
  repository: Type.String(),
  branch: Type.String(),
  commit: Type.String(),
  pushedAt: Type.Integer(),
  references: Type.Array(CodeReference),
});

export const CodeRefsOfFlag = Type.Object({
  flag: Type.String(),
  exists: Type.Boolean({ description: 'Whether the project has a flag of that key' }),
  branches: Type.Array(BranchRefs, { description: 'Each pushed branch whose last scan names the key, with those references' }),
});
export type CodeRefsOfFlag = Static<typeof CodeRefsOfFlag>;

export const CodeRefsMissing = Type.Object({
  missing: Type.Array(
    Type.Object({
      key: Type.String(),
      references: Type.Integer(),
      branches: Type.Array(Type.String(), { description: 'repository@branch of each scan that names it' }),
    }),
    { description: 'Keys code references name that are no flag of the project, by key' },
  ),
  unknown: Type.Integer({ description: 'References whose key is computed (kind unknown), over every branch' }),
});
export type CodeRefsMissing = Static<typeof CodeRefsMissing>;
