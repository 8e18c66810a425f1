/**
 * The gateway as the control process runs it when `gateway.workers` > 1 (SPEC §11): the chain tracker
 * (gateway/chain-tracker.ts, polling origins here only), the state publisher (publisher.ts) and the
 * worker supervisor (supervisor.ts). main.ts puts this where the one-process gateway would be; the
 * store, devnet, API, monitors and notifications stay in the control process.
 *
 * Rate-limit leases of the workers are answered by `leases` (default: ControlLeaseBuckets, this
 * process's buckets shared by its workers; with Redis, part L's backend).
 *
 * Order: the tracker is built first (its state is in each worker's init), the workers are forked and
 * awaited, then the tracker starts. `close(grace)` drains the workers; `stop()` (after the listeners)
 * stops the tracker, the publisher and the chain clients.
 */
import type { ChainTracker } from '../chain/tracker.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { buildChainTracker } from '../gateway/chain-tracker.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import { BufferPool } from '../http1/index.js';
import type { Logger } from '../log.js';
import { renderMerged } from '../metrics/merge.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import type { OutboundPolicy } from '../outbound/policy.js';
import { ControlLeaseBuckets } from './lease-ipc.js';
import { StatePublisher } from './publisher.js';
import { WorkerSupervisor } from './supervisor.js';

export interface GatewayWorkersOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
  metrics: MetricsRegistry;
  outbound: OutboundPolicy;
  leases?: LeaseBackend;
  /**
   * Named states every worker has from its start (in its `init`), e.g. `keys`: the gateway key snapshot,
   * so no worker serves a moment without it. Later changes: `publishState`.
   */
  states?: Readonly<Record<string, unknown>>;
  /** Handlers of workers' named reports, in place before any worker starts (later: `onReport`). */
  reports?: Readonly<Record<string, (payload: unknown) => void>>;
}

export interface GatewayWorkers {
  readonly url: string;
  readonly chain: ChainTracker;
  /** Named state for every worker (e.g. `keys`): see publisher.ts `publishState`. */
  publishState(topic: string, payload: unknown): void;
  /** Workers' named reports (e.g. `key-usage`): see publisher.ts `onReport`. */
  onReport(topic: string, handler: (payload: unknown) => void): void;
  /** The control's metrics and every worker's, summed (the API's `/metrics`). */
  renderMetrics(): Promise<string>;
  /** Drains the workers: stop accepting, finish in-flight requests within `graceMs`. */
  close(graceMs: number): Promise<void>;
  /** Stops the tracker and the publisher (after `close`). */
  stop(): Promise<void>;
}

export async function startGatewayWorkers(options: GatewayWorkersOptions): Promise<GatewayWorkers> {
  const { config, logger, metrics } = options;
  const own = buildChainTracker({
    config,
    directory: options.directory,
    health: options.health,
    clock: options.clock,
    logger: logger.child({ part: 'gateway' }),
    metrics,
    outbound: options.outbound,
    buffers: new BufferPool(),
  });
  const chain = own.chain;
  let supervisor: WorkerSupervisor | undefined;
  const publisher = new StatePublisher({
    config,
    directory: options.directory,
    health: options.health,
    chain,
    leases: options.leases ?? new ControlLeaseBuckets(options.clock),
    logger,
    broadcast: (message) => supervisor?.broadcast(message),
  });
  for (const [topic, payload] of Object.entries(options.states ?? {})) publisher.publishState(topic, payload);
  for (const [topic, handler] of Object.entries(options.reports ?? {})) publisher.onReport(topic, handler);
  publisher.start();
  const stop = async (): Promise<void> => {
    chain.stop();
    publisher.stop();
    await own.close();
  };
  try {
    supervisor = await WorkerSupervisor.start({
      workers: config.gateway.workers,
      logger: logger.child({ part: 'workers' }),
      metrics,
      init: (slot) => publisher.init(slot),
      onMessage: (message, reply) => publisher.handle(message, reply),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const workers = supervisor;
  chain.start();
  logger.info('gateway workers serving', { workers: config.gateway.workers, url: workers.url, pids: workers.pids() });
  return {
    url: workers.url,
    chain,
    publishState: (topic, payload) => publisher.publishState(topic, payload),
    onReport: (topic, handler) => publisher.onReport(topic, handler),
    renderMetrics: async () => renderMerged([metrics.families(), ...(await workers.gather())]),
    close: (graceMs) => workers.close(graceMs),
    stop,
  };
}
