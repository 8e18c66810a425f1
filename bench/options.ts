/** Command-line options of `npm run bench` (see docs/benchmarks.md). */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BenchOptions {
  quick: boolean;
  /** Seconds per measured leg. */
  seconds: number;
  /** Seconds of unmeasured load before each leg (lets V8 optimise and pools fill). */
  warmupSeconds: number;
  /** Concurrent connections for the throughput legs. */
  connections: number;
  /** wrk threads. One keeps wrk off the second core's neck on a 2-core machine. */
  threads: number;
  /** Install nginx-light and wrk with apt-get when missing (root only). */
  install: boolean;
  /** Include the realism legs against a real anvil node. */
  anvil: boolean;
  /** Directory for <date>.json and <date>.md. */
  outDir: string;
  /** Only run legs whose id contains one of these (empty: all). */
  only: string[];
  /** When set, Switchyard runs with --cpu-prof and writes its profile into this directory. */
  profileDir?: string;
  /** Compile Switchyard first and run the build, as installs do (default: yes, except with --quick). */
  build: boolean;
  /** wsread: requests each WebSocket connection keeps in flight (wrk's HTTP connections hold 1). */
  wsInflight: number;
  /** wsfanout: WebSocket connections subscribed to newHeads (SPEC §12: 5,000). */
  wsConnections: number;
  /** wsfanout: measured heads (after 5 unmeasured ones; --quick: 1). */
  wsHeads: number;
  /**
   * `--workers N` (N ≥ 2): a second Switchyard with `gateway.workers: N` runs each HTTP Switchyard leg
   * beside the default one (workers: 1). A full run defaults to 2; `--workers 1` (and --quick) run only the
   * default one.
   */
  workers?: number;
  /**
   * `--workers-first`: the workers: N leg runs before the workers: 1 one in the first scenario (then the
   * order alternates as always). Runs with and without it balance the order over scenarios.
   */
  workersFirst: boolean;
  /** mgmt: pools of 10 origins each in the leg's own Switchyard (SPEC §12: 1000; --quick 100). */
  mgmtPools: number;
  /** mgmt: seconds of the monitoring CPU window (full 30, quick 12; at least 12 — one interval and its jitter). */
  mgmtSeconds: number;
  /**
   * `--compare BEFORE.json [AFTER.json]`: print each leg's and target's change. With one file, against this
   * run's report; with two, no run: the two files are compared.
   */
  compare?: { before: string; after?: string };
  /** `--history [DIR]`: no run; print the Markdown table of the last five full runs' medians in DIR. */
  history?: string;
}

/** `--workers` of a full run unless given: SPEC §12's "workers: 2 no slower than workers: 1". */
const DEFAULT_FULL_WORKERS = 2;

const DEFAULT_OUT = fileURLToPath(new URL('./results', import.meta.url));

export const USAGE = `usage: npm run bench -- [--quick] [--seconds N] [--warmup N] [--connections N] [--threads N]
                        [--no-install] [--no-anvil] [--out DIR] [--only ID[,ID…]] [--profile DIR]
                        [--build | --no-build] [--ws-inflight N] [--ws-connections N] [--ws-heads N]
                        [--workers N [--workers-first]] [--mgmt-pools N]
                        [--mgmt-seconds N] [--compare BEFORE.json [AFTER.json]] [--history [DIR]]
  --quick        1 s legs, no warm-up, sources under tsx, and missing tools skip legs instead of failing (CI)
  --seconds N    seconds per measured leg (default 10, quick 1)
  --connections  concurrent connections for the throughput legs (default 32)
  --out DIR      where <date>.json and <date>.md go (default bench/results)
  --only IDS     only legs whose id contains one of these, e.g. --only single,cached
  --profile DIR  run Switchyard under --cpu-prof and write the .cpuprofile into DIR
  --no-build     run the sources under tsx instead of compiling first (--build: compile even with --quick)
  --ws-inflight N     WebSocket read leg: requests in flight per connection (default 1, as wrk's HTTP legs)
  --ws-connections N  fan-out leg: connections subscribed to newHeads (default 5000)
  --ws-heads N        fan-out leg: measured heads (default 30, quick 5)
  --workers N    also run each HTTP Switchyard leg against a second Switchyard with gateway.workers: N
                 (2–256), reported beside workers: 1 with the ratio and each process's CPU (full runs:
                 2 by default; --workers 1 runs only workers: 1)
  --workers-first  the workers: N leg runs first in the first scenario (the order alternates after it)
  --mgmt-pools N      management leg: pools of 10 origins each (default 1000, quick 100)
  --mgmt-seconds N    management leg: seconds of the monitoring CPU window (default 30, quick 12; at least 12)
  --compare A [B]     print each leg's and target's change from the report A (a results .json) to this
                      run's, or with B to B's, without running anything
  --history [DIR]     print a Markdown table of the last five full runs' results in DIR (default
                      bench/results) with their median, without running anything`;

export function parseOptions(argv: string[]): BenchOptions {
  const options: BenchOptions = {
    quick: false,
    seconds: 10,
    warmupSeconds: 2,
    connections: 32,
    threads: 1,
    install: true,
    anvil: true,
    outDir: DEFAULT_OUT,
    only: [],
    build: true,
    wsInflight: 1,
    wsConnections: 5_000,
    wsHeads: 30,
    workersFirst: false,
    mgmtPools: 1000,
    mgmtSeconds: 30,
  };
  let mgmtPoolsGiven = false;
  let mgmtSecondsGiven = false;
  /** The next argument when it is a value rather than an option (for options whose value is optional). */
  const optionalValue = (i: number): string | undefined => {
    const next = argv[i + 1];
    return next === undefined || next.startsWith('--') ? undefined : next;
  };
  let wsHeadsGiven = false;
  let workersGiven = false;
  let buildGiven = false;
  let secondsGiven = false;
  let warmupGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      return next;
    };
    const positive = (): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) throw new Error(`${arg} needs a whole number\n${USAGE}`);
      return n;
    };
    switch (arg) {
      case '--quick':
        options.quick = true;
        break;
      case '--seconds':
        options.seconds = Math.max(1, positive());
        secondsGiven = true;
        break;
      case '--warmup':
        options.warmupSeconds = positive();
        warmupGiven = true;
        break;
      case '--connections':
        options.connections = Math.max(1, positive());
        break;
      case '--threads':
        options.threads = Math.max(1, positive());
        break;
      case '--no-install':
        options.install = false;
        break;
      case '--no-anvil':
        options.anvil = false;
        break;
      case '--out':
        options.outDir = value();
        break;
      case '--only':
        options.only = value().split(',').filter(Boolean);
        break;
      case '--profile':
        options.profileDir = value();
        break;
      case '--build':
        options.build = true;
        buildGiven = true;
        break;
      case '--no-build':
        options.build = false;
        buildGiven = true;
        break;
      case '--ws-inflight':
        options.wsInflight = Math.max(1, positive());
        break;
      case '--ws-connections':
        options.wsConnections = Math.max(1, positive());
        break;
      case '--ws-heads':
        options.wsHeads = Math.max(1, positive());
        wsHeadsGiven = true;
        break;
      case '--workers': {
        const n = positive();
        if (n > 256) throw new Error(`--workers is at most 256 (gateway.workers' range)\n${USAGE}`);
        if (n >= 2) options.workers = n;
        workersGiven = true;
        break;
      }
      case '--workers-first':
        options.workersFirst = true;
        break;
      case '--mgmt-pools':
        options.mgmtPools = Math.max(1, positive());
        mgmtPoolsGiven = true;
        break;
      case '--mgmt-seconds':
        options.mgmtSeconds = Math.max(12, positive());
        mgmtSecondsGiven = true;
        break;
      case '--compare': {
        const before = value();
        const after = optionalValue(i);
        if (after !== undefined) i++;
        options.compare = after === undefined ? { before } : { before, after };
        break;
      }
      case '--history': {
        const dir = optionalValue(i);
        if (dir !== undefined) i++;
        options.history = dir ?? DEFAULT_OUT;
        break;
      }
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown option ${arg}\n${USAGE}`);
    }
  }
  if (options.quick && !secondsGiven) options.seconds = 1;
  if (options.quick && !warmupGiven) options.warmupSeconds = 0;
  if (options.quick && !buildGiven) options.build = false;
  if (options.quick && !wsHeadsGiven) options.wsHeads = 5;
  // A full run reports every SPEC §12 target, "workers: 2 no slower than 1" included; --workers 1 skips it.
  if (!options.quick && !workersGiven) options.workers = DEFAULT_FULL_WORKERS;
  if (options.quick && !mgmtPoolsGiven) options.mgmtPools = 100;
  if (options.quick && !mgmtSecondsGiven) options.mgmtSeconds = 12;
  if (options.connections < options.threads) options.threads = options.connections;
  options.outDir = options.outDir.startsWith('/') ? options.outDir : join(process.cwd(), options.outDir);
  return options;
}
