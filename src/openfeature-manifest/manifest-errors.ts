// The manifest API's refusals in the CLI's own ErrorResponse (open-feature/cli api/v0/sync.yaml), which its
// generated client decodes to print the reason: Flagwire's detail is the message, its title and docs link
// ride beside it, and a refused body's problems that name a field are listed as details. The routes
// declare both: the body (their errorBody) and its responses in the OpenAPI document.
import { errorDocs, type FlagwireError } from '../errors.js';
import { errorResponses } from '../routes/openapi-parts.js';
import { ManifestErrorResponse, ManifestFlagCreate } from './schemas.js';

/** The routes' error responses in the OpenAPI document: the CLI's ErrorResponse, as manifestErrorBody renders it. */
export const manifestErrors = errorResponses(ManifestErrorResponse, false);

/** The fields a manifest write's body has: a problem that begins with one names it (src/model/validation.ts). */
const kFields: ReadonlySet<string> = new Set(Object.keys(ManifestFlagCreate.properties));
const kUnknownField = /^unknown field "(.+)"$/;

/** The field `problem` (one of a refusal's problems, which the checks join with '; ') names, or null. */
function fieldOf(problem: string): string | null {
  const unknown = kUnknownField.exec(problem);
  if (unknown !== null) return unknown[1]!;
  const first = problem.split(' ', 1)[0]!;
  return kFields.has(first) ? first : null;
}

/** `{error: {message, status, code, docs, details?}}`: every refusal of a manifest route (its errorBody). */
export function manifestErrorBody(error: FlagwireError, docsUrl: string): ManifestErrorResponse {
  const body: ManifestErrorResponse['error'] = {
    message: error.detail,
    status: error.status,
    code: error.title,
    docs: errorDocs(error, docsUrl),
  };
  if (error.code === 'INVALID_REQUEST') {
    const details = error.detail.split('; ').flatMap((message) => {
      const field = fieldOf(message);
      return field === null ? [] : [{ field, message }];
    });
    if (details.length > 0) body.details = details;
  }
  return { error: body };
}
