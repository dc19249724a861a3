// A generated source corpus for code references (src/code-refs): files in every language a scan reads,
// each with planted flag references of every form (a literal key, a constant, an alias of a constant,
// a computed key) through OpenFeature's and Unleash's calls, on clients named plainly and through
// aliases, and decoys: strings that look like keys but are no flag call (logged, cached, in comments,
// in strings, an unused constant, a common method on something that is no flag client). Each block also
// shadows: a file-level constant holding a decoy, hidden by a parameter of its name (a dynamic key) and by
// a local constant of its name holding a key (a constant key), and a local constant holding a decoy used
// by name in another function (a dynamic key: the constant is not seen there).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type PlantedForm = 'literal' | 'constant' | 'alias' | 'dynamic';

export interface PlantedReference {
  readonly file: string;
  readonly form: PlantedForm;
  /** The key; for a dynamic one, none a scan may report. */
  readonly key: string | null;
}

export interface Corpus {
  readonly files: number;
  readonly planted: readonly PlantedReference[];
}

/** Every decoy's text starts so: a reported key that does is a false positive. */
export const kDecoyPrefix = 'decoy-';

/** The keys of one block: each form once, and its decoys. */
interface Block {
  readonly i: number;
  readonly literal: string;
  readonly constant: string;
  readonly alias: string;
  readonly decoy: string;
  /** The key of the local constant that shadows the file-level one. */
  readonly inner: string;
}

type Render = (blocks: readonly Block[]) => string;

const kRenderers: Readonly<Record<string, { ext: string; render: Render }>> = {
  typescript: {
    ext: 'ts',
    render: (blocks) =>
      [
        "import { OpenFeature } from '@openfeature/server-sdk';",
        'const client = OpenFeature.getClient();',
        ...blocks.flatMap((b) => [
          `const CONST_${b.i} = '${b.constant}';`,
          `const ALIAS_SRC_${b.i} = '${b.alias}';`,
          `const DECOY_${b.i} = '${b.decoy}-unused';`,
          `const SHADOW_${b.i} = '${b.decoy}-outer';`,
        ]),
        ...blocks.flatMap((b) => [
          `export const paramShadow${b.i} = (SHADOW_${b.i}: string) => client.getBooleanValue(SHADOW_${b.i}, false);`,
          `export function localShadow${b.i}() {`,
          `  const SHADOW_${b.i} = '${b.inner}';`,
          `  return client.getBooleanValue(SHADOW_${b.i}, false);`,
          '}',
          `export function leakFrom${b.i}() { const leak${b.i} = '${b.decoy}-leak'; return leak${b.i}; }`,
          `export function leakTo${b.i}() { return client.getBooleanValue(leak${b.i}, false); }`,
        ]),
        ...blocks.flatMap((b) => [
          `export async function check${b.i}(user: { id: string }, unleash: Unleash, button: Button, cache: Map<string, string>) {`,
          `  const alias${b.i} = ALIAS_SRC_${b.i};`,
          `  const u${b.i} = unleash;`,
          `  if (await client.getBooleanValue('${b.literal}', false)) {`,
          `    console.log('${b.decoy}-log');`,
          '  }',
          `  const details = await client.getStringDetails(CONST_${b.i}, 'x');`,
          `  const on = u${b.i}.isEnabled(alias${b.i});`,
          `  const computed = await client.getBooleanValue(\`dyn-\${user.id}\`, false);`,
          `  // client.getBooleanValue('${b.decoy}-comment', false)`,
          `  const text = "client.getBooleanValue('${b.decoy}-string', false)";`,
          `  button.isEnabled('${b.decoy}-button');`,
          `  cache.get('${b.decoy}-cache');`,
          '  return [details, on, computed, text];',
          '}',
        ]),
      ].join('\n'),
  },
  javascript: {
    ext: 'js',
    render: (blocks) =>
      [
        "const { initialize } = require('unleash-client');",
        'const flags = initialize({ appName: "x" });',
        ...blocks.flatMap((b) => [
          `const CONST_${b.i} = "${b.constant}";`,
          `let ALIAS_SRC_${b.i} = "${b.alias}";`,
          `const SHADOW_${b.i} = "${b.decoy}-outer";`,
        ]),
        ...blocks.flatMap((b) => [
          `function paramShadow${b.i}(client, { SHADOW_${b.i} }) { return client.getBooleanValue(SHADOW_${b.i}, false); }`,
          `function localShadow${b.i}(client) {`,
          `  if (client) { const SHADOW_${b.i} = "${b.inner}"; return client.getBooleanValue(SHADOW_${b.i}, false); }`,
          '}',
          `function leak${b.i}(client) {`,
          `  { const leak${b.i} = "${b.decoy}-leak"; console.log(leak${b.i}); }`,
          `  return client.getBooleanValue(leak${b.i}, false);`,
          '}',
        ]),
        ...blocks.flatMap((b) => [
          `function check${b.i}(client, user, menu) {`,
          `  const a${b.i} = ALIAS_SRC_${b.i};`,
          `  const r${b.i} = flags;`,
          `  const x = flags.isEnabled("${b.literal}") ? 1 : 2;`,
          `  const y = client.getNumberValue(CONST_${b.i}, 0);`,
          `  r${b.i}.getVariant(a${b.i});`,
          `  let k${b.i} = "${b.decoy}-reassigned"; k${b.i} = user.key;`,
          `  client.getBooleanValue(k${b.i}, false);`,
          `  menu.isEnabled("${b.decoy}-menu");`,
          `  console.info("${b.decoy}-info");`,
          '  return x + y;',
          '}',
        ]),
      ].join('\n'),
  },
  python: {
    ext: 'py',
    render: (blocks) =>
      [
        'from openfeature import api',
        'client = api.get_client()',
        ...blocks.flatMap((b) => [
          `CONST_${b.i} = "${b.constant}"`,
          `ALIAS_SRC_${b.i} = '${b.alias}'`,
          `DECOY_${b.i} = "${b.decoy}-unused"`,
          `SHADOW_${b.i} = "${b.decoy}-outer"`,
        ]),
        ...blocks.flatMap((b) => [
          `def param_shadow_${b.i}(SHADOW_${b.i}):`,
          `    return client.get_boolean_value(SHADOW_${b.i}, False)`,
          `def local_shadow_${b.i}():`,
          `    SHADOW_${b.i} = "${b.inner}"`,
          `    return client.get_boolean_value(SHADOW_${b.i}, False)`,
          `def leak_from_${b.i}():`,
          `    leak_${b.i} = "${b.decoy}-leak"`,
          `    return leak_${b.i}`,
          `def leak_to_${b.i}():`,
          `    return client.get_boolean_value(leak_${b.i}, False)`,
          '',
        ]),
        ...blocks.flatMap((b) => [
          `def check_${b.i}(user, unleash_client, settings):`,
          `    alias_${b.i} = ALIAS_SRC_${b.i}`,
          `    u_${b.i} = unleash_client`,
          `    if client.get_boolean_value("${b.literal}", False):`,
          `        print("${b.decoy}-print")`,
          `    client.get_string_details(flag_key=CONST_${b.i}, default_value="x")`,
          `    u_${b.i}.is_enabled(alias_${b.i})`,
          `    client.get_boolean_value(f"dyn-{user}", False)`,
          `    # client.get_boolean_value("${b.decoy}-comment", False)`,
          `    settings.is_enabled("${b.decoy}-settings")`,
          `    return "client.get_boolean_value('${b.decoy}-string')"`,
          '',
        ]),
      ].join('\n'),
  },
  go: {
    ext: 'go',
    render: (blocks) =>
      [
        'package flags',
        '',
        'import (',
        '\t"context"',
        '\t"fmt"',
        ')',
        ...blocks.flatMap((b) => [
          `const Const${b.i} = "${b.constant}"`,
          `var aliasSrc${b.i} = "${b.alias}"`,
          `const shadow${b.i} = "${b.decoy}-outer"`,
        ]),
        ...blocks.flatMap((b) => [
          `func paramShadow${b.i}(ctx context.Context, client *openfeature.Client, shadow${b.i} string) {`,
          `	client.BooleanValue(ctx, shadow${b.i}, false, openfeature.EvaluationContext{})`,
          '}',
          `func localShadow${b.i}(ctx context.Context, client *openfeature.Client) {`,
          `	if client != nil {`,
          `		shadow${b.i} := "${b.inner}"`,
          `		client.BooleanValue(ctx, shadow${b.i}, false, openfeature.EvaluationContext{})`,
          '	}',
          '}',
          `func leak${b.i}(ctx context.Context, client *openfeature.Client) {`,
          `	if client != nil {`,
          `		leak${b.i} := "${b.decoy}-leak"`,
          `		fmt.Println(leak${b.i})`,
          '	}',
          `	client.BooleanValue(ctx, leak${b.i}, false, openfeature.EvaluationContext{})`,
          '}',
        ]),
        ...blocks.flatMap((b) => [
          `func check${b.i}(ctx context.Context, client *openfeature.Client, unleash *Unleash, user string, menu Menu) {`,
          `\talias${b.i} := aliasSrc${b.i}`,
          `\tu${b.i} := unleash`,
          `\tif on, _ := client.BooleanValue(ctx, "${b.literal}", false, openfeature.EvaluationContext{}); on {`,
          `\t\tfmt.Println("${b.decoy}-println")`,
          '\t}',
          `\tclient.StringValueDetails(ctx, Const${b.i}, "x", openfeature.EvaluationContext{})`,
          `\tu${b.i}.IsEnabled(alias${b.i})`,
          `\tclient.BooleanValue(ctx, "dyn-"+user, false, openfeature.EvaluationContext{})`,
          `\tmenu.IsEnabled("${b.decoy}-menu")`,
          `\t// client.BooleanValue(ctx, "${b.decoy}-comment", false, nil)`,
          '}',
        ]),
      ].join('\n'),
  },
  java: {
    ext: 'java',
    render: (blocks) =>
      [
        'package flags;',
        'import dev.openfeature.sdk.Client;',
        'public class Checks {',
        ...blocks.flatMap((b) => [
          `  static final String CONST_${b.i} = "${b.constant}";`,
          `  private static final String ALIAS_SRC_${b.i} = "${b.alias}";`,
          `  static final String SHADOW_${b.i} = "${b.decoy}-outer";`,
        ]),
        ...blocks.flatMap((b) => [
          `  boolean paramShadow${b.i}(Client client, String SHADOW_${b.i}) { return client.getBooleanValue(SHADOW_${b.i}, false); }`,
          `  boolean localShadow${b.i}(Client client) {`,
          `    String SHADOW_${b.i} = "${b.inner}";`,
          `    return client.getBooleanValue(SHADOW_${b.i}, false);`,
          '  }',
          `  String leakFrom${b.i}() { String leak${b.i} = "${b.decoy}-leak"; return leak${b.i}; }`,
          `  boolean leakTo${b.i}(Client client) { return client.getBooleanValue(leak${b.i}, false); }`,
        ]),
        ...blocks.flatMap((b) => [
          `  void check${b.i}(Client client, Unleash unleash, User user, Button button) {`,
          `    String alias${b.i} = ALIAS_SRC_${b.i};`,
          `    Unleash u${b.i} = unleash;`,
          `    if (client.getBooleanValue("${b.literal}", false)) {`,
          `      System.out.println("${b.decoy}-println");`,
          '    }',
          `    client.getStringDetails(Checks.CONST_${b.i}, "x");`,
          `    u${b.i}.isEnabled(alias${b.i});`,
          `    client.getBooleanValue("dyn-" + user.id(), false);`,
          `    button.isEnabled("${b.decoy}-button");`,
          `    /* client.getBooleanValue("${b.decoy}-comment", false); */`,
          '  }',
        ]),
        '}',
      ].join('\n'),
  },
  csharp: {
    ext: 'cs',
    render: (blocks) =>
      [
        'using OpenFeature;',
        'public class Checks {',
        ...blocks.flatMap((b) => [
          `  const string Const${b.i} = "${b.constant}";`,
          `  static readonly string AliasSrc${b.i} = "${b.alias}";`,
          `  const string Shadow${b.i} = "${b.decoy}-outer";`,
        ]),
        ...blocks.flatMap((b) => [
          `  Task<bool> ParamShadow${b.i}(FeatureClient client, string Shadow${b.i}) => client.GetBooleanValueAsync(Shadow${b.i}, false);`,
          `  Task<bool> LocalShadow${b.i}(FeatureClient client) {`,
          `    var Shadow${b.i} = "${b.inner}";`,
          `    return client.GetBooleanValueAsync(Shadow${b.i}, false);`,
          '  }',
          `  string LeakFrom${b.i}() { var leak${b.i} = "${b.decoy}-leak"; return leak${b.i}; }`,
          `  Task<bool> LeakTo${b.i}(FeatureClient client) => client.GetBooleanValueAsync(leak${b.i}, false);`,
        ]),
        ...blocks.flatMap((b) => [
          `  public async Task Check${b.i}(FeatureClient client, IUnleash unleash, User user, Control control) {`,
          `    var alias${b.i} = AliasSrc${b.i};`,
          `    var u${b.i} = unleash;`,
          `    if (await client.GetBooleanValueAsync("${b.literal}", false)) {`,
          `      Console.WriteLine("${b.decoy}-writeline");`,
          '    }',
          `    await client.GetStringDetailsAsync(Const${b.i}, "x");`,
          `    u${b.i}.IsEnabled(alias${b.i});`,
          `    await client.GetBooleanValueAsync($"dyn-{user.Id}", false);`,
          `    control.IsEnabled("${b.decoy}-control");`,
          `    // await client.GetBooleanValueAsync("${b.decoy}-comment", false);`,
          '  }',
        ]),
        '}',
      ].join('\n'),
  },
  kotlin: {
    ext: 'kt',
    render: (blocks) =>
      [
        'package flags',
        ...blocks.flatMap((b) => [
          `const val CONST_${b.i} = "${b.constant}"`,
          `private val aliasSrc${b.i} = "${b.alias}"`,
          `private val shadow${b.i} = "${b.decoy}-outer"`,
        ]),
        ...blocks.flatMap((b) => [
          `fun paramShadow${b.i}(client: Client, shadow${b.i}: String) = client.getBooleanValue(shadow${b.i}, false)`,
          `fun localShadow${b.i}(client: Client): Boolean {`,
          `    val shadow${b.i} = "${b.inner}"`,
          `    return client.getBooleanValue(shadow${b.i}, false)`,
          '}',
          `fun leakFrom${b.i}(): String {`,
          `    val leak${b.i} = "${b.decoy}-leak"`,
          `    return leak${b.i}`,
          '}',
          `fun leakTo${b.i}(client: Client) = client.getBooleanValue(leak${b.i}, false)`,
        ]),
        ...blocks.flatMap((b) => [
          `fun check${b.i}(client: Client, unleash: Unleash, user: User, button: Button) {`,
          `    val alias${b.i} = aliasSrc${b.i}`,
          `    val u${b.i} = unleash`,
          `    if (client.getBooleanValue("${b.literal}", false)) {`,
          `        println("${b.decoy}-println")`,
          '    }',
          `    client.getStringDetails(CONST_${b.i}, "x")`,
          `    u${b.i}.isEnabled(alias${b.i})`,
          `    client.getBooleanValue("dyn-\${user.id}", false)`,
          `    button.isEnabled("${b.decoy}-button")`,
          '}',
        ]),
      ].join('\n'),
  },
  ruby: {
    ext: 'rb',
    render: (blocks) =>
      [
        "require 'openfeature/sdk'",
        ...blocks.flatMap((b) => [
          `CONST_${b.i} = "${b.constant}"`,
          `ALIAS_SRC_${b.i} = '${b.alias}'`,
          `shadow_${b.i} = "${b.decoy}-outer"`,
        ]),
        ...blocks.flatMap((b) => [
          `def param_shadow_${b.i}(client, shadow_${b.i})`,
          `  client.fetch_boolean_value(flag_key: shadow_${b.i}, default_value: false)`,
          'end',
          `def local_shadow_${b.i}(client)`,
          `  shadow_${b.i} = "${b.inner}"`,
          `  client.fetch_boolean_value(flag_key: shadow_${b.i}, default_value: false)`,
          'end',
          `def leak_${b.i}(client, items)`,
          `  items.each { |item| leak_${b.i} = "${b.decoy}-leak"; puts item, leak_${b.i} }`,
          `  client.fetch_boolean_value(flag_key: leak_${b.i}, default_value: false)`,
          'end',
        ]),
        ...blocks.flatMap((b) => [
          `def check_${b.i}(client, unleash, user, door)`,
          `  alias_${b.i} = ALIAS_SRC_${b.i}`,
          `  u_${b.i} = unleash`,
          `  if client.fetch_boolean_value(flag_key: "${b.literal}", default_value: false)`,
          `    puts "${b.decoy}-puts"`,
          '  end',
          `  client.fetch_string_details(flag_key: CONST_${b.i}, default_value: "x")`,
          `  u_${b.i}.is_enabled?(alias_${b.i})`,
          `  client.fetch_boolean_value(flag_key: "dyn-#{user.id}", default_value: false)`,
          `  door.is_enabled?("${b.decoy}-door")`,
          `  # client.fetch_boolean_value(flag_key: "${b.decoy}-comment", default_value: false)`,
          'end',
        ]),
      ].join('\n'),
  },
};

/** The languages the corpus writes, one file of each in turn. */
export const kCorpusLanguages: readonly string[] = Object.keys(kRenderers);

/**
 * Writes `files` files under `dir` (languages in turn, `blocks` blocks each) and says what they plant.
 * Every block plants one reference of each form, and its shadowing ones: a constant and two dynamic keys.
 */
export function writeCorpus(dir: string, files: number, blocks = 3): Corpus {
  const planted: PlantedReference[] = [];
  for (let n = 0; n < files; n++) {
    const language = kCorpusLanguages[n % kCorpusLanguages.length]!;
    const { ext, render } = kRenderers[language]!;
    const folder = join(dir, language, String(Math.floor(n / 100)));
    mkdirSync(folder, { recursive: true });
    const file = `${language}/${Math.floor(n / 100)}/checks_${n}.${ext}`;
    const made: Block[] = [];
    for (let i = 0; i < blocks; i++) {
      const id = `${n}-${i}`;
      const block = {
        i,
        literal: `lit-${id}`,
        constant: `const-${id}`,
        alias: `alias-${id}`,
        decoy: `${kDecoyPrefix}${id}`,
        inner: `inner-${id}`,
      };
      made.push(block);
      planted.push(
        { file, form: 'literal', key: block.literal },
        { file, form: 'constant', key: block.constant },
        { file, form: 'alias', key: block.alias },
        { file, form: 'dynamic', key: null },
        { file, form: 'constant', key: block.inner },
        { file, form: 'dynamic', key: null },
        { file, form: 'dynamic', key: null },
      );
    }
    writeFileSync(join(dir, file), render(made));
  }
  return { files, planted };
}
