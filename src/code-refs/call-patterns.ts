// The calls a scan takes for flag evaluations, per language: OpenFeature's client methods (each SDK's
// naming), Unleash's isEnabled and getVariant, and Flagwire's provider called directly. OpenFeature's
// names say what they are wherever they are called; Unleash's are common words (a button's isEnabled),
// so they count only on a receiver that is a flag client (isFlagClient in scan.ts).
import type { LanguageName } from './languages.js';

export type Sdk = 'openfeature' | 'unleash' | 'flagwire';

export interface CallPattern {
  readonly sdk: Sdk;
  /** Its name is a common word: the call counts only on a receiver that is a flag client. */
  readonly needsClient: boolean;
  /** It answers a boolean: a call site cleanup may rewrite. */
  readonly boolean: boolean;
}

/** The names an argument holding the flag key goes by where arguments are named. */
export const kKeyArgumentNames: ReadonlySet<string> = new Set([
  'flagKey',
  'flag_key',
  'key',
  'featureName',
  'feature_name',
  'toggleName',
  'toggle_name',
  'feature',
]);

type Table = ReadonlyMap<string, CallPattern>;

function table(
  openFeature: readonly string[],
  booleans: readonly string[],
  unleash: readonly string[],
  flagwire: readonly string[] = [],
): Table {
  const map = new Map<string, CallPattern>();
  for (const method of openFeature) map.set(method, { sdk: 'openfeature', needsClient: false, boolean: booleans.includes(method) });
  for (const method of unleash) map.set(method, { sdk: 'unleash', needsClient: true, boolean: method === unleash[0] });
  for (const method of flagwire) map.set(method, { sdk: 'flagwire', needsClient: false, boolean: false });
  return map;
}

/** Each type's method names in a naming scheme: `name(type, form)`. */
function names(types: readonly string[], forms: readonly string[], name: (type: string, form: string) => string): string[] {
  return types.flatMap((type) => forms.map((form) => name(type, form)));
}

const kJsTable = table(
  names(['Boolean', 'String', 'Number', 'Object'], ['Value', 'Details'], (t, f) => `get${t}${f}`),
  ['getBooleanValue'],
  ['isEnabled', 'getVariant'],
  names(['Boolean', 'String', 'Number', 'Object'], ['Evaluation'], (t, f) => `resolve${t}${f}`),
);
const kJvmTable = table(
  names(['Boolean', 'String', 'Integer', 'Double', 'Object'], ['Value', 'Details'], (t, f) => `get${t}${f}`),
  ['getBooleanValue'],
  ['isEnabled', 'getVariant'],
);

const kTables: Readonly<Record<LanguageName, Table>> = {
  typescript: kJsTable,
  tsx: kJsTable,
  javascript: kJsTable,
  python: table(
    names(
      ['boolean', 'string', 'integer', 'float', 'object'],
      ['value', 'details', 'value_async', 'details_async'],
      (t, f) => `get_${t}_${f}`,
    ),
    ['get_boolean_value', 'get_boolean_value_async'],
    ['is_enabled', 'get_variant'],
  ),
  go: table(
    names(['Boolean', 'String', 'Int', 'Float', 'Object'], ['Value', 'ValueDetails'], (t, f) => `${t}${f}`),
    ['BooleanValue'],
    ['IsEnabled', 'GetVariant'],
  ),
  java: kJvmTable,
  kotlin: kJvmTable,
  csharp: table(
    names(['Boolean', 'String', 'Integer', 'Double', 'Object'], ['Value', 'Details'], (t, f) => `Get${t}${f}Async`),
    ['GetBooleanValueAsync'],
    ['IsEnabled', 'GetVariant'],
  ),
  ruby: table(
    names(['boolean', 'string', 'number', 'integer', 'float', 'object'], ['value', 'details'], (t, f) => `fetch_${t}_${f}`),
    ['fetch_boolean_value'],
    ['is_enabled?', 'get_variant'],
  ),
};

/** The call patterns of a language, by method name. */
export function callPatterns(language: LanguageName): Table {
  return kTables[language];
}

const kPrefilters = new Map<LanguageName, RegExp>();

/** Whether a file's text names any of its language's methods: a file that does not is not parsed. */
export function mayReference(language: LanguageName, text: string): boolean {
  let filter = kPrefilters.get(language);
  if (filter === undefined) {
    const words = [...kTables[language].keys()].map((m) => m.replace(/[?]/g, '\\?'));
    filter = new RegExp(words.join('|'));
    kPrefilters.set(language, filter);
  }
  return filter.test(text);
}
