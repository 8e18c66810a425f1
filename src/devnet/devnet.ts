/**
 * The offline devnet: `nodes` anvil processes (default 2) with the network's chain id (default 11155111),
 * reachable on 127.0.0.1:base_port, base_port+1, … (base_port 0 = free ports; unset: 9545, 9546, …, or free
 * ports when those are taken), serving as the origins
 * `anvil-0`, `anvil-1`, … of one pool.
 *
 * With more than one node they are one chain (replicator.ts): every anvil starts from one genesis
 * timestamp with `--no-mining --order fifo` on a free port of its own, and the address clients use is a
 * proxy in this process (node-proxy.ts) that forwards to it. The leader (anvil-0, until it fails) mines,
 * the others replay its blocks and report the same hash at every height, and a transaction sent to any
 * node reaches the leader. With one node there is nothing to replicate: the anvil listens on the address
 * itself and mines on its own (a block per transaction, or every `block_time` seconds).
 *
 * Killing a node's PID (the `pids` of the `devnet started` log line) kills its anvil; its address then
 * refuses connections, as the dead node would. Nothing restarts it: the others go on as the chain (the
 * next one takes over as leader within about a second), and `serve` must be restarted to have it back.
 *
 * No anvil may outlive the process that started it:
 * - `stop()` (normal shutdown, SIGTERM/SIGINT via `serve`) stops each node by PID;
 * - a process 'exit' handler SIGKILLs any node still running (uncaught exception, process.exit);
 * - a watchdog (`/bin/sh` blocked reading a pipe whose only writer is this process) kills the nodes when
 *   this process dies without running any handler (SIGKILL, crash): the kernel closes the pipe, `read`
 *   returns, the watchdog kills the PIDs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DEFAULTS } from '../config/defaults.js';
import type { DevnetConfig, PoolConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { type AnvilNode, startAnvil } from './anvil.js';
import { NodeProxy } from './node-proxy.js';
import { ChainReplicator, type ReplicaStatus } from './replicator.js';

const HOST = '127.0.0.1';

export interface DevnetNodeStatus extends ReplicaStatus {
  /** The address clients use. */
  readonly url: string;
  readonly pid: number;
}

export interface Devnet {
  /** The nodes as clients see them: `url`/`port` are the addresses of the pool's origins, `pid` the anvil's. */
  readonly nodes: readonly AnvilNode[];
  readonly pids: readonly number[];
  /** The pool whose origins are the nodes (named by `devnet.pool`). */
  readonly pool: PoolConfig;
  /** Each node's part in the one chain (a single node is its own leader). */
  replication(): DevnetNodeStatus[];
  stop(): Promise<void>;
}

/** A devnet config whose ports are decided (`base_port` 0: free ports). */
type PortedDevnet = DevnetConfig & { base_port: number };

/** `defaultBasePort`: the ports tried when `devnet.base_port` is unset (tests pass one they hold). */
export async function startDevnet(
  devnet: DevnetConfig,
  logger: Logger,
  now: () => number,
  defaultBasePort: number = DEFAULTS.devnet.base_port,
): Promise<Devnet> {
  if (devnet.base_port === undefined) return startOnDefaultPorts(devnet, logger, now, defaultBasePort);
  const config: PortedDevnet = { ...devnet, base_port: devnet.base_port };
  const anvils = await startNodes(config, Math.floor(now() / 1000));
  const proxies = await startProxies(config, anvils);
  const killAll = (): void => {
    for (const anvil of anvils) anvil.killNow();
  };
  process.on('exit', killAll);
  const watchdog = startWatchdog(anvils.map((anvil) => anvil.pid));
  const names = anvils.map((_, i) => `anvil-${i}`);
  const nodes = anvils.map((anvil, i) => asSeenByClients(anvil, proxies[i]));
  for (const [i, proxy] of proxies.entries()) void anvils[i]?.exited.then(() => proxy.close());
  const replicator = proxies.length > 0 ? replicatorOf(config, anvils, proxies, names, logger) : undefined;
  const shutDown = async (): Promise<void> => {
    await replicator?.stop();
    watchdog.kill('SIGKILL');
    await Promise.all(anvils.map((anvil) => anvil.stop()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    process.off('exit', killAll);
  };
  try {
    await replicator?.start();
  } catch (err) {
    await shutDown();
    throw new Error(`devnet: cannot make the nodes one chain: ${(err as Error).message}`, { cause: err });
  }
  logger.info('devnet started', {
    pids: anvils.map((anvil) => anvil.pid),
    origins: nodes.map((node) => node.url),
    chain_id: config.chain_id,
    ...(replicator ? { leader: names[0] } : {}),
    watchdog_pid: watchdog.pid,
  });
  let stopped: Promise<void> | undefined;
  return {
    nodes,
    pids: anvils.map((anvil) => anvil.pid),
    pool: devnetPool(config, nodes, names),
    replication: () => replicationOf(nodes, names, replicator),
    stop(): Promise<void> {
      stopped ??= shutDown().then(() => logger.info('devnet stopped', { pids: anvils.map((anvil) => anvil.pid) }));
      return stopped;
    },
  };
}

/** The client-facing port of node `i` (0: a free one). */
function nodePort(config: PortedDevnet, i: number): number {
  return config.base_port === 0 ? 0 : config.base_port + i;
}

/** A start-up error, with what to do when the configured ports are taken. */
function portsTaken(config: PortedDevnet, err: unknown): Error {
  const message = (err as Error).message;
  if (!/address already in use/i.test(message)) return new Error(`devnet: ${message}`, { cause: err });
  return new DevnetPortsTaken(
    `devnet: ${message}; devnet.base_port ${config.base_port}…${config.base_port + config.nodes - 1} is taken (another anvil or node?): ` +
      'stop it, or set devnet.base_port in a config file (0 picks free ports)',
    { cause: err },
  );
}

/**
 * `devnet.base_port` unset: the default ports (9545, 9546, …), or — when those are taken by another anvil
 * or a node of the operator's — free ports, with a warning: the demo starts beside whatever holds them,
 * and the devnet pool's origins follow the new addresses (pools/seed.ts `refreshOrigins`).
 */
async function startOnDefaultPorts(
  config: DevnetConfig,
  logger: Logger,
  now: () => number,
  base: number,
): Promise<Devnet> {
  try {
    return await startDevnet({ ...config, base_port: base }, logger, now);
  } catch (err) {
    if (!(err instanceof DevnetPortsTaken)) throw err;
    logger.warn('devnet: the default ports are taken; the nodes listen on free ports instead', {
      taken: `127.0.0.1:${base}…${base + config.nodes - 1}`,
      set_ports_with: 'devnet.base_port in a config file',
    });
    return startDevnet({ ...config, base_port: 0 }, logger, now);
  }
}

/** A node's port was taken (the message says which ports and how to choose others). */
class DevnetPortsTaken extends Error {}

/** The anvils, from one genesis `timestamp`; replicated ones on free ports without mining of their own. */
function startNodes(config: PortedDevnet, timestamp: number): Promise<AnvilNode[]> {
  const replicated = config.nodes > 1;
  return settleAll(
    Array.from({ length: config.nodes }, (_, i) =>
      startAnvil({
        chainId: config.chain_id,
        host: HOST,
        port: replicated ? 0 : nodePort(config, i),
        blockTime: config.block_time,
        timestamp,
        ...(replicated ? { noMining: true, order: 'fifo' as const } : {}),
      }),
    ),
    (node) => node.stop(),
  ).catch((err: unknown) => {
    throw portsTaken(config, err);
  });
}

/** With more than one node: a proxy per anvil on the client-facing port (none for a single node). */
async function startProxies(config: PortedDevnet, anvils: readonly AnvilNode[]): Promise<NodeProxy[]> {
  if (config.nodes <= 1) return [];
  return settleAll(
    anvils.map((anvil, i) => NodeProxy.listen({ host: HOST, port: nodePort(config, i), target: anvil.url })),
    (proxy) => proxy.close(),
  ).catch(async (err: unknown) => {
    await Promise.all(anvils.map((anvil) => anvil.stop()));
    throw portsTaken(config, err);
  });
}

/** The replicator that makes the nodes one chain, fed by the proxies' transactions and intercepts. */
function replicatorOf(
  config: DevnetConfig,
  anvils: readonly AnvilNode[],
  proxies: readonly NodeProxy[],
  names: readonly string[],
  logger: Logger,
): ChainReplicator {
  const replicator = new ChainReplicator(
    anvils.map((anvil, i) => ({
      url: anvil.url,
      name: names[i] as string,
      gate: proxies[i] as NodeProxy,
      exited: anvil.exited,
    })),
    { blockTimeMs: config.block_time * 1000, logger },
  );
  for (const proxy of proxies) {
    proxy.onTransaction = () => replicator.transaction();
    proxy.intercept = (body) => replicator.intercept(body);
  }
  return replicator;
}

/** The pool whose origins are the nodes, with a jsonrpc monitor. */
function devnetPool(config: DevnetConfig, nodes: readonly AnvilNode[], names: readonly string[]): PoolConfig {
  return {
    name: config.pool,
    description: 'local anvil devnet started by switchyard serve',
    origins: nodes.map((node, i) => ({ name: names[i] as string, address: node.url, archive: true })),
    monitor: { type: 'jsonrpc', interval: 5, timeout: 2, consecutive_down: 2, consecutive_up: 1 },
  };
}

function replicationOf(
  nodes: readonly AnvilNode[],
  names: readonly string[],
  replicator: ChainReplicator | undefined,
): DevnetNodeStatus[] {
  const status = replicator?.status();
  return nodes.map((node, i) => ({
    url: node.url,
    pid: node.pid,
    ...(status?.[i] ?? { name: names[i] as string, role: 'leader', answering: true, height: undefined, inStep: true }),
  }));
}

/** The node under the address of its proxy (when there is one); the PID stays the anvil's. */
function asSeenByClients(anvil: AnvilNode, proxy: NodeProxy | undefined): AnvilNode {
  if (proxy === undefined) return anvil;
  return {
    pid: anvil.pid,
    url: proxy.url,
    port: proxy.port,
    exited: anvil.exited,
    stop: () => anvil.stop().then(() => proxy.close()),
    killNow: () => anvil.killNow(),
  };
}

/** All of `starts`, or — when one fails — the first failure, after undoing those that succeeded. */
async function settleAll<T>(starts: Promise<T>[], undo: (started: T) => Promise<void>): Promise<T[]> {
  const settled = await Promise.allSettled(starts);
  const done = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure === undefined) return done;
  await Promise.all(done.map(undo));
  throw failure.reason;
}

function startWatchdog(pids: readonly number[]): ChildProcess {
  // `read` blocks until the pipe's writer (this process) is gone, then the nodes are killed.
  const script = 'read -r _ignored; kill -9 "$@" 2>/dev/null; exit 0';
  const child = spawn('/bin/sh', ['-c', script, 'switchyard-devnet-watchdog', ...pids.map(String)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.on('error', () => {
    // Without /bin/sh the exit handler and stop() still cover every orderly exit.
  });
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return child;
}
