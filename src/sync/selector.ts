// flagd sync selectors as Flagwire reads them (docs/api.md: Sync service):
//   flagSetId=<project id>                     a single-environment project
//   flagSetId=<project id>/<environment>       one environment of a multi-environment project
//   ...,token=<read token secret>              the credential, for clients that send nothing else
// The stock Node flagd provider sends its selector and nothing else (no provider_id, no call
// credentials), so the token may ride in it. A selector may therefore hold a secret: it is never logged
// or echoed: an error says what is wrong, never a value.
import { FlagwireError } from '../errors.js';

export interface Selector {
  /** The project id and, for a multi-environment project, "/<environment>": the set's id, without the token. */
  readonly flagSetId: string;
  readonly projectId: string;
  readonly environment: string | null;
  /** The token's secret when the selector carries one; null otherwise. */
  readonly token: string | null;
}

// Project ids and environment names never hold ",", "=" or "/" (src/model/ids.ts, checkEnvName): one
// split each is unambiguous. Long enough for any id and name, short enough that nothing big is parsed.
const kMaxSelectorLength = 512;
const kExample = 'flagSetId=<project id>[/<environment>][,token=<read token>]';

/** Parses `raw`, or throws INVALID_REQUEST naming what is wrong (never the token). */
export function parseSelector(raw: string): Selector {
  if (raw === '') throw invalid(`No selector: send the Flagd-Selector header "${kExample}".`);
  if (raw.length > kMaxSelectorLength)
    throw invalid(`The selector is longer than ${kMaxSelectorLength} characters; expected "${kExample}".`);
  let flagSetId: string | null = null;
  let token: string | null = null;
  for (const part of raw.split(',')) {
    const eq = part.indexOf('=');
    const key = eq === -1 ? part.trim() : part.slice(0, eq).trim();
    const value = eq === -1 ? '' : part.slice(eq + 1).trim();
    if (key === 'flagSetId' && flagSetId === null && value !== '') flagSetId = value;
    else if (key === 'token' && token === null && value !== '') token = value;
    // The part is not echoed: a token written without its "token=" would be.
    else throw invalid(`The selector has a part that is empty, repeated or not flagSetId or token; expected "${kExample}".`);
  }
  if (flagSetId === null) throw invalid(`The selector names no flagSetId; expected "${kExample}".`);
  const slash = flagSetId.indexOf('/');
  const projectId = slash === -1 ? flagSetId : flagSetId.slice(0, slash);
  const environment = slash === -1 ? null : flagSetId.slice(slash + 1);
  if (projectId === '' || environment === '' || environment?.includes('/')) {
    throw invalid('The flagSetId is not "<project id>" or "<project id>/<environment>".');
  }
  return { flagSetId, projectId, environment, token };
}

function invalid(detail: string): FlagwireError {
  return new FlagwireError('INVALID_REQUEST', detail);
}
