// The command line of `npm run bench`. A usage error exits 2.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { kRepo } from './locations.js';
import { kAllScenarios, type ScenarioKey } from './scenarios.js';

export interface Options {
  quick: boolean;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number[];
  scenarios: ScenarioKey[];
  outDir: string;
  label: string;
  evalWorkers: string | null;
  micro: boolean;
  keepData: boolean;
  profile: boolean;
  /** What drives the GET and POST scenarios: wrk (native, the default) or autocannon. */
  generator: 'wrk' | 'autocannon';
  generatorWorkers: number;
  wrkThreads: number;
  /** taskset CPU list for wrk; null: not pinned. */
  wrkCpus: string | null;
}

const kUsage = `usage: npm run bench -- [--quick] [--rounds N] [--duration S] [--warmup S] [--connections 50,200]
       [--scenarios a,b,c,d,e,f,g,h,i,j,k,l,m] [--eval-workers N] [--label NAME] [--out DIR]
       [--generator wrk|autocannon] [--wrk-threads N] [--wrk-cpus LIST] [--generator-workers N] [--[no-]micro] [--keep-data] [--profile]
  --quick          1 round of 3 s per run, no micro-benches (default: 3 rounds of 10 s, then the micro-benches)
  --label NAME     block of RESULTS.md to write (default "main"; use one per variant, e.g. workers-2)
  --out DIR        where RESULTS.md and results.svg go (default bench/)
  --eval-workers N       FLAGWIRE_EVAL_WORKERS for the Flagwire server (default: the server's own default)
  --generator G          what drives the GET and POST runs: wrk (default; Debian's package, installed when
                         missing) or autocannon. PATCH runs and the paced runs (l), (m) always use autocannon.
  --wrk-threads N        wrk threads (default: a quarter of the cores, at least 1)
  --wrk-cpus LIST        pin wrk to these CPUs with taskset (e.g. 8-15); default: not pinned
  --generator-workers N  autocannon worker threads for the GET runs with --generator autocannon (default 0)
  --profile        run Flagwire under --cpu-prof (every thread) and summarise where its time went;
                   profiling slows it down, so figures of a profiled run are not comparable`;

export function parseOptions(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const options: Options = {
    quick,
    rounds: quick ? 1 : 3,
    durationSec: quick ? 3 : 10,
    warmupSec: quick ? 1 : 3,
    connections: [50, 200],
    scenarios: kAllScenarios,
    outDir: join(kRepo, 'bench'),
    label: 'main',
    evalWorkers: null,
    micro: !quick,
    keepData: false,
    profile: false,
    generator: 'wrk',
    generatorWorkers: 0,
    wrkThreads: Math.max(1, Math.floor(availableParallelism() / 4)),
    wrkCpus: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v;
    };
    const positive = () => {
      const n = Number(value());
      if (!Number.isFinite(n) || n <= 0) usage(`${flag} needs a positive number`);
      return n;
    };
    switch (flag) {
      case '--quick':
        break;
      case '--rounds':
        options.rounds = Math.round(positive());
        break;
      case '--duration':
        options.durationSec = positive();
        break;
      case '--warmup':
        options.warmupSec = positive();
        break;
      case '--connections':
        options.connections = value()
          .split(',')
          .map(Number)
          .filter((n) => n > 0);
        break;
      case '--scenarios':
        options.scenarios = value()
          .split(',')
          .filter((s): s is ScenarioKey => (kAllScenarios as string[]).includes(s));
        break;
      case '--out':
        options.outDir = value();
        break;
      case '--label':
        options.label = value().replace(/[^\w.-]/g, '-');
        break;
      case '--eval-workers':
        options.evalWorkers = String(Math.round(positive()));
        break;
      case '--no-micro':
        options.micro = false;
        break;
      case '--micro':
        options.micro = true;
        break;
      case '--keep-data':
        options.keepData = true;
        break;
      case '--profile':
        options.profile = true;
        break;
      case '--generator': {
        const g = value();
        if (g !== 'wrk' && g !== 'autocannon') usage('--generator is wrk or autocannon');
        options.generator = g;
        break;
      }
      case '--wrk-threads':
        options.wrkThreads = Math.round(positive());
        break;
      case '--wrk-cpus':
        options.wrkCpus = value();
        break;
      case '--generator-workers':
        options.generatorWorkers = Math.round(positive());
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${kUsage}\n`);
        return process.exit(0);
      default:
        usage(`unknown option ${flag}`);
    }
  }
  if (options.connections.length === 0 || options.scenarios.length === 0) usage('nothing to run');
  return options;
}

function usage(message: string): never {
  process.stderr.write(`bench: ${message}\n${kUsage}\n`);
  process.exit(2);
}
