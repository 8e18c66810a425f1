/**
 * The offline devnet: `nodes` anvil processes (default 2) with the network's chain id (default 11155111)
 * on 127.0.0.1:base_port, base_port+1, … (base_port 0 = free ports), serving as the origins of one pool.
 * All nodes share one genesis timestamp, so they share a genesis block; they are otherwise independent
 * chains, kept in step by a TransactionMirror (mirror.ts) that re-sends each node's new transactions to
 * the others within about 100 ms.
 *
 * No anvil may outlive the process that started it:
 * - `stop()` (normal shutdown, SIGTERM/SIGINT via `serve`) stops each node by PID;
 * - a process 'exit' handler SIGKILLs any node still running (uncaught exception, process.exit);
 * - a watchdog (`/bin/sh` blocked reading a pipe whose only writer is this process) kills the nodes when
 *   this process dies without running any handler (SIGKILL, crash): the kernel closes the pipe, `read`
 *   returns, the watchdog kills the PIDs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { DevnetConfig, PoolConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { type AnvilNode, startAnvil } from './anvil.js';
import { TransactionMirror } from './mirror.js';

export interface Devnet {
  readonly nodes: readonly AnvilNode[];
  readonly pids: readonly number[];
  /** The pool whose origins are the nodes (named by `devnet.pool`). */
  readonly pool: PoolConfig;
  stop(): Promise<void>;
}

export async function startDevnet(config: DevnetConfig, logger: Logger, now: () => number): Promise<Devnet> {
  const timestamp = Math.floor(now() / 1000);
  const started = await Promise.allSettled(
    Array.from({ length: config.nodes }, (_, i) =>
      startAnvil({
        chainId: config.chain_id,
        port: config.base_port === 0 ? 0 : config.base_port + i,
        blockTime: config.block_time,
        timestamp,
      }),
    ),
  );
  const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure !== undefined) {
    await Promise.all(nodes.map((node) => node.stop()));
    const message = (failure.reason as Error).message;
    const hint = /address already in use/i.test(message)
      ? `; devnet.base_port ${config.base_port}…${config.base_port + config.nodes - 1} is taken (another anvil or node?): ` +
        'stop it, or set devnet.base_port in a config file (0 picks free ports)'
      : '';
    throw new Error(`devnet: ${message}${hint}`, { cause: failure.reason });
  }

  const killAll = (): void => {
    for (const node of nodes) node.killNow();
  };
  process.on('exit', killAll);
  const watchdog = startWatchdog(nodes.map((node) => node.pid));
  const mirror =
    nodes.length > 1
      ? new TransactionMirror(
          nodes.map((node) => node.url),
          logger,
        )
      : undefined;
  try {
    await mirror?.start();
  } catch (err) {
    watchdog.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.stop()));
    process.off('exit', killAll);
    throw new Error(`devnet: cannot watch the nodes: ${(err as Error).message}`, { cause: err });
  }
  logger.info('devnet started', {
    pids: nodes.map((node) => node.pid),
    origins: nodes.map((node) => node.url),
    chain_id: config.chain_id,
    watchdog_pid: watchdog.pid,
  });

  let stopped: Promise<void> | undefined;
  return {
    nodes,
    pids: nodes.map((node) => node.pid),
    pool: {
      name: config.pool,
      description: 'local anvil devnet started by switchyard serve',
      origins: nodes.map((node, i) => ({ name: `anvil-${i}`, address: node.url })),
      monitor: { type: 'jsonrpc', interval: 5, timeout: 2, consecutive_down: 2, consecutive_up: 1 },
    },
    stop(): Promise<void> {
      stopped ??= (async () => {
        await mirror?.stop();
        watchdog.kill('SIGKILL');
        await Promise.all(nodes.map((node) => node.stop()));
        process.off('exit', killAll);
        logger.info('devnet stopped', { pids: nodes.map((node) => node.pid) });
      })();
      return stopped;
    },
  };
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
