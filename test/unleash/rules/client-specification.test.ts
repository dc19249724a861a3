// In-process: every case of Unleash's client specification (the npm package @unleash/client-specification,
// Apache-2.0; test/unleash/specification-vectors.ts reads it) through Flagwire's compiled Unleash model
// (src/unleash/rules/feature.ts): each isEnabled case's answer, and each variant case's name, payload, enabled
// and feature_enabled. Each feature is first checked as the Management API checks a flag's model
// (src/unleash/rules/model-problems.ts): none is refused, and the parts the SDKs never meet are named.
import t from 'tap';
import { type CompiledFeature, compileFeature, evaluateFeature, type UnleashFields } from '../../../src/unleash/rules/feature.js';
import { kUnleashModel } from '../../../src/model/unleash-model.js';
import { modelProblems, modelWarnings } from '../../../src/unleash/rules/model-problems.js';
import { loadSpecifications, kSpecificationVersion, type VectorContext } from '../specification-vectors.js';

/** A vector's context as the SDKs read one: its own field, else its property; every value as text. */
class VectorFields implements UnleashFields {
  constructor(private readonly context: VectorContext) {}
  unleashField(name: string): string | undefined {
    const value = name === 'properties' ? undefined : this.context[name];
    return value === undefined || value === null ? undefined : String(value);
  }
  unleashValue(name: string): string | undefined {
    const own = this.unleashField(name);
    if (own !== undefined) return own;
    const value = this.context.properties?.[name];
    return value === undefined || value === null ? undefined : String(value);
  }
}

const specifications = loadSpecifications();
/** The models the Management API refuses, with why: none. */
const refused: string[] = [];
/** The parts the Management API names as never met, with where. */
const warned: string[] = [];
let cases = 0;

t.test(`client specification ${kSpecificationVersion}`, async (t) => {
  t.ok(specifications.length >= 22, `${specifications.length} specification files`);
  for (const spec of specifications) {
    t.test(spec.file, async (t) => {
      const compiled = new Map<string, CompiledFeature>();
      for (const feature of spec.features) {
        t.ok(kUnleashModel.Check(feature.model), `${feature.name}: the model has the schema's shape`);
        for (const problem of modelProblems(feature.model)) refused.push(`${spec.file} ${feature.name}: ${problem}`);
        for (const warning of modelWarnings(feature.model)) warned.push(`${spec.file} ${feature.name}: ${warning}`);
        compiled.set(
          feature.name,
          compileFeature(feature.name, feature.enabled, feature.model, (name) => compiled.get(name)),
        );
      }
      for (const c of spec.tests) {
        const feature = compiled.get(c.toggleName);
        const answer = feature === undefined ? false : evaluateFeature(feature, new VectorFields(c.context), Date.now()).enabled;
        t.equal(answer, c.expectedResult, c.description);
        cases++;
      }
      for (const c of spec.variantTests) {
        const feature = compiled.get(c.toggleName);
        let got: Record<string, unknown>;
        if (feature === undefined) got = { name: 'disabled', enabled: false, feature_enabled: false };
        else {
          const { enabled, variant } = evaluateFeature(feature, new VectorFields(c.context), Date.now());
          got =
            variant === null
              ? { name: 'disabled', enabled: false, feature_enabled: enabled }
              : {
                  name: variant.name,
                  enabled: true,
                  feature_enabled: enabled,
                  ...(variant.payload === undefined ? {} : { payload: variant.payload }),
                };
        }
        const expected: Record<string, unknown> = { ...c.expectedResult };
        // Older cases leave feature_enabled out; the rest is compared whole.
        if (expected.feature_enabled === undefined) delete got.feature_enabled;
        t.same(got, expected, c.description);
        cases++;
      }
    });
  }
});

t.test('the Management API refuses none of the specification, and names the parts the SDKs never meet', async (t) => {
  t.comment(`${cases} cases evaluated`);
  for (const line of warned) t.comment(line);
  t.equal(cases, 279, 'every case: 227 of isEnabled, 52 of getVariant');
  t.same(refused, [], 'every feature of the specification is stored');
  // An operator Unleash does not have, a strategy naming a segment that does not exist, and expressions
  // RE2 does not compile: the SDKs read each as a constraint never met, and so does Flagwire.
  t.same(
    warned.map((line) => line.replace(/: .*/, '')),
    [
      '13-constraint-operators.json F7.invalid-operator',
      '15-global-constraints.json F9.withMissingSegment',
      '21-regex-constraint-operators.json invalid-regex-defaults-to-false',
      '21-regex-constraint-operators.json R90.reject_lookahead',
      '21-regex-constraint-operators.json R91.reject_backreference',
    ],
    'only the features with an unknown operator, a missing segment or an expression RE2 does not compile',
  );
  t.match(warned[0], /"[^"]+" is not one of Unleash's operators .*, so the constraint is never met, inverted or not/);
  t.match(warned[1], /no segment of the model has the id \d+, so the strategy never lets a context in/);
  t.match(warned[2], /is not a regular expression RE2 accepts, so the constraint is never met/);
});
