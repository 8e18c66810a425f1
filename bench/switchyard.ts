/**
 * Switchyard as the benchmark sees it: a separate process started through its CLI — the production
 * build (`node <out>/cli/run.js serve`, compiled by `buildCli` with tsconfig.build.json), or the sources
 * (`node --import tsx src/cli/run.ts serve`, no build, slower per request) — with a generated
 * config whose networks each route to one upstream path, listeners on free 127.0.0.1 ports, logs at
 * `warn`, and a throwaway data dir. Stopped by PID.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child } from './child.js';
import { freePort } from './ports.js';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(REPO_ROOT, 'src', 'cli', 'run.ts');

/** Connections one address may hold at the gateway in the bench (the fan-out leg opens up to this many). */
export const WS_CLIENT_CEILING = 10_000;
/** How long a profiled Switchyard may take to exit (writing its .cpuprofile) before SIGKILL. */
const PROFILE_STOP_MS = 60_000;

/**
 * network name → the upstream URL it forwards to, or for the fan-out leg's network an origin with a
 * `ws_address` (its newHeads push feeds the chain tracker) and a head poll interval.
 */
export type Routes = Record<string, string | { address: string; ws_address: string; head_poll_interval: string }>;

export function switchyardConfig(options: {
  dataDir: string;
  gatewayPort: number;
  apiPort: number;
  routes: Routes;
  cacheMaxBytes?: number;
  /** `gateway.workers` (absent: the default, 1). */
  workers?: number;
}): Record<string, unknown> {
  const networks: Record<string, unknown> = {};
  const pools: unknown[] = [];
  let chainId = 900_001; // arbitrary, distinct per network; no monitor checks it
  for (const [network, route] of Object.entries(options.routes)) {
    const origin =
      typeof route === 'string' ? { address: route } : { address: route.address, ws_address: route.ws_address };
    networks[network] = {
      chain_id: chainId++,
      pools: [`${network}-pool`],
      // The upstream nginx answers every request on /large with the 10 MiB file — the chain tracker's
      // head polls too. Polled once an hour (once at start, before the legs), that leg measures the
      // pass-through it is about, not the tracker downloading 10 MiB a second.
      ...(network === 'large' ? { head_poll_interval: '1h' } : {}),
      ...(typeof route === 'string' ? {} : { head_poll_interval: route.head_poll_interval }),
    };
    pools.push({ name: `${network}-pool`, origins: [{ name: 'upstream', ...origin }] });
  }
  return {
    data_dir: options.dataDir,
    log_level: 'warn',
    gateway: {
      listen: `127.0.0.1:${options.gatewayPort}`,
      ...(options.workers === undefined ? {} : { workers: options.workers }),
      ...(options.cacheMaxBytes === undefined ? {} : { cache_max_bytes: options.cacheMaxBytes }),
      // Every bench client is 127.0.0.1: the fan-out leg's thousands of WebSockets need per-client
      // ceilings above the defaults (256 connections per address, 64 WebSockets per client). The other
      // legs open at most 32 connections, so this changes nothing for them.
      max_connections_per_client: WS_CLIENT_CEILING,
      websocket: { max_connections_per_client: WS_CLIENT_CEILING },
    },
    api: { listen: `127.0.0.1:${options.apiPort}` },
    networks,
    pools,
  };
}

export class SwitchyardProcess {
  readonly gatewayUrl: string;
  readonly apiUrl: string;
  /** The inspector's port when started with one. */
  readonly inspectPort: number | undefined;
  /** The API token made before start (`tokenAccount`), else undefined. */
  readonly token: string | undefined;
  readonly #child: Child;

  readonly #profiling: boolean;

  private constructor(
    child: Child,
    gatewayPort: number,
    apiPort: number,
    inspectPort: number | undefined,
    token: string | undefined,
    profiling: boolean,
  ) {
    this.#child = child;
    this.#profiling = profiling;
    this.inspectPort = inspectPort;
    this.token = token;
    this.gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    this.apiUrl = `http://127.0.0.1:${apiPort}`;
  }

  static cliAvailable(): boolean {
    return existsSync(CLI);
  }

  static async start(options: {
    workDir: string;
    routes: Routes;
    cacheMaxBytes?: number;
    profileDir?: string;
    /** A compiled CLI (`…/cli/run.js`) to run with plain node, as installs do, instead of the sources under tsx. */
    compiledCli?: string;
    /** Open the inspector on 127.0.0.1:port (the fan-out leg forces garbage collections through it). */
    inspectPort?: number;
    /** `gateway.workers`; with more than one, the process started is the control process. */
    workers?: number;
    /** Its own subdirectory of workDir for config and data (a second instance beside the first). */
    name?: string;
    /** Top-level config keys set over the generated ones (the management leg's account, pools and limits). */
    config?: Record<string, unknown>;
    /**
     * Before starting, make a read-write API token for this account with the CLI (`token create`, same
     * runtime and store); it is then `token`.
     */
    tokenAccount?: string;
  }): Promise<SwitchyardProcess> {
    if (!SwitchyardProcess.cliAvailable()) throw new Error(`Switchyard CLI not found at ${CLI}`);
    const gatewayPort = await freePort();
    let apiPort = await freePort();
    while (apiPort === gatewayPort) apiPort = await freePort();
    const home = options.name === undefined ? options.workDir : join(options.workDir, options.name);
    const dataDir = join(home, 'switchyard-data');
    mkdirSync(dataDir, { recursive: true });
    const configFile = join(home, 'switchyard.yaml');
    // JSON is YAML: the config pipeline reads it unchanged.
    const config = switchyardConfig({
      dataDir,
      gatewayPort,
      apiPort,
      routes: options.routes,
      ...optional(options),
      ...(options.workers === undefined ? {} : { workers: options.workers }),
    });
    writeFileSync(configFile, JSON.stringify({ ...config, ...options.config }, null, 2));
    const entry = options.compiledCli === undefined ? ['--import', 'tsx', CLI] : [options.compiledCli];
    const token = options.tokenAccount === undefined ? undefined : createToken(entry, configFile, options.tokenAccount);
    const child = new Child(
      options.name ?? 'switchyard',
      process.execPath,
      [
        ...(options.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.profileDir]),
        ...(options.inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${options.inspectPort}`]),
        ...entry,
        'serve',
        '--config',
        configFile,
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_ENV: 'production' },
      },
    );
    const profiling = options.profileDir !== undefined;
    const server = new SwitchyardProcess(child, gatewayPort, apiPort, options.inspectPort, token, profiling);
    try {
      await child.waitForPort(gatewayPort, 60_000);
    } catch (err) {
      await child.stop();
      throw err;
    }
    return server;
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** The last few KiB of its log (JSON lines on stderr, level warn and above). */
  get logTail(): string {
    return this.#child.stderrTail;
  }

  /** SIGTERM, then SIGKILL after 5 s — 60 s when profiling: a busy process writes its profile on exit. */
  stop(): Promise<void> {
    return this.#child.stop(this.#profiling ? PROFILE_STOP_MS : undefined);
  }
}

/** `switchyard token create` on the config's store (bounded to 2 minutes); the token is stdout's last line. */
function createToken(entry: string[], configFile: string, account: string): string {
  const out = spawnSync(
    process.execPath,
    [...entry, 'token', 'create', '--account', account, '--name', 'bench', '--config', configFile],
    { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_ENV: 'production' } },
  );
  const token = (out.stdout ?? '').trim().split('\n').at(-1) ?? '';
  if (out.status !== 0 || token === '') {
    throw new Error(`token create failed (${out.status}): ${`${out.stderr ?? ''}`.trim().slice(0, 500)}`);
  }
  return token;
}

function optional(options: { cacheMaxBytes?: number }): { cacheMaxBytes?: number } {
  return options.cacheMaxBytes === undefined ? {} : { cacheMaxBytes: options.cacheMaxBytes };
}

/**
 * Compiles the sources as `npm run build` does, into `outDir` (bounded to 5 minutes), and returns the
 * CLI entry to run; undefined with the compiler's complaint logged when it fails.
 */
export function buildCli(outDir: string, log: (line: string) => void): string | undefined {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', outDir], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (result.status !== 0) {
    log(
      `bench: building Switchyard failed (${result.status}): ${(result.stdout + result.stderr).trim().slice(0, 1000)}`,
    );
    return undefined;
  }
  return join(outDir, 'cli', 'run.js');
}
