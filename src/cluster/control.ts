/**
 * The gateway as the control process runs it when `gateway.workers` > 1 (SPEC §11): the chain tracker
 * (gateway/chain-tracker.ts, polling origins here only), the state publisher (publisher.ts) and the
 * worker supervisor (supervisor.ts). main.ts calls it in place of `startGateway`, with the same options
 * plus the workers' lease and quota backends, and gets a Gateway back; the store, devnet, API, monitors and notifications stay in the control
 * process.
 *
 * Gateway keys go to the workers and their usage comes back, per-origin statistics and origin scores
 * come back (probe outcomes go out to the workers' score books), and the store's readiness goes out for
 * their `/readyz` (shared-state.ts). Rate-limit leases of the workers are answered by `leases` (default: limits/local-backend.ts,
 * this process's buckets shared by its workers; with `redis_url`, Redis's).
 *
 * A reloaded config (SPEC §15, `reconfigure`) goes to the tracker here and to every worker at once
 * (publisher.ts `publishConfig`), so each serves it within moments of the reload.
 *
 * Order: the tracker is built first (its state is in each worker's init), the workers are forked and
 * awaited, then the tracker starts. `close(grace)` drains the workers, then stops the tracker, the
 * publisher and the chain clients (as a one-process gateway's close stops its tracker).
 */
import type { ChainTracker } from '../chain/tracker.js';
import { buildChainTracker } from '../gateway/chain-tracker.js';
import type { Gateway, GatewayOptions } from '../gateway/gateway.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaBackend } from '../gateway/rpc/quota-backend.js';
import { BufferPool } from '../http1/index.js';
import { LocalLeaseBackend } from '../limits/local-backend.js';
import { renderMerged } from '../metrics/merge.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { StatePublisher } from './publisher.js';
import { relaySends, SENDS_TOPIC } from './relayed-sends.js';
import { shareWithWorkers } from './shared-state.js';
import { WorkerSupervisor } from './supervisor.js';

/**
 * The one-process gateway's options (main.ts passes the same), of which the workers' control uses
 * config, directory, health, clock, logger, metrics, outbound, affinityShare (between instances: the
 * control relays it to and from its workers) and sends (the workers' accepted transactions, relayed to
 * it); `buffers`, `subscriptions` and `limiter` concern a gateway in this process, and each worker makes
 * its own (the response cache too: gateway.ts `serveGateway`).
 */
export interface GatewayWorkersOptions extends GatewayOptions {
  /** Where workers' rate-limit leases come from (default: LocalLeaseBackend, this process's buckets). */
  leases?: LeaseBackend;
  /** Where workers' daily-quota reserves go (Redis, or this process's counts); none: workers count locally. */
  quotas?: QuotaBackend;
  /**
   * Named states every worker has from its start (in its `init`), e.g. `keys`: the gateway key snapshot,
   * so no worker serves a moment without it. Later changes: `publishState`.
   */
  states?: Readonly<Record<string, unknown>>;
  /** Handlers of workers' named reports, in place before any worker starts (later: `onReport`). */
  reports?: Readonly<Record<string, (payload: unknown) => void>>;
}

export interface GatewayWorkers extends Gateway {
  /** The control process's tracker (the workers' chains are its replicas). */
  readonly chain: ChainTracker;
  /** Named state for every worker (e.g. `keys`): see publisher.ts `publishState`. */
  publishState(topic: string, payload: unknown): void;
  /** Workers' named reports (e.g. `key-usage`): see publisher.ts `onReport`. */
  onReport(topic: string, handler: (payload: unknown) => void): void;
  /** The control's metrics and every worker's, summed (the API's `/metrics`). */
  renderMetrics(): Promise<string>;
  /** Drains the workers (stop accepting, finish in-flight requests within `graceMs`), then stops the tracker. */
  close(graceMs: number): Promise<void>;
}

export async function startGatewayWorkers(options: GatewayWorkersOptions): Promise<GatewayWorkers> {
  const { config, logger } = options;
  const metrics = options.metrics ?? new MetricsRegistry();
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
    leases: options.leases ?? new LocalLeaseBackend(options.clock),
    quotas: options.quotas,
    affinity: options.affinityShare,
    clock: options.clock,
    logger,
    broadcast: (message) => supervisor?.broadcast(message),
  });
  for (const [topic, payload] of Object.entries(options.states ?? {})) publisher.publishState(topic, payload);
  for (const [topic, handler] of Object.entries(options.reports ?? {})) publisher.onReport(topic, handler);
  // Gateway keys (their table out, usage back) and the store's readiness: shared-state.ts.
  const stopSharing = shareWithWorkers(publisher, {
    keys: options.keys,
    store: options.storeReadiness,
    stats: options.stats,
    scores: options.scores,
    verifyFailures: options.verifyFailures,
  });
  // The control's score book holds origins of the pools there are (the workers prune their own).
  const scores = options.scores;
  const unsubscribe = options.directory.onChange(() => scores?.prune(options.directory.allPools()));
  // The workers' accepted transactions go to this process's ledger (relayed-sends.ts).
  const sends = options.sends;
  if (sends !== undefined) publisher.onReport(SENDS_TOPIC, (payload) => relaySends(sends, payload));
  publisher.start();
  const stop = async (): Promise<void> => {
    chain.stop();
    unsubscribe();
    stopSharing();
    publisher.stop();
    await own.close();
  };
  try {
    supervisor = await WorkerSupervisor.start({
      workers: config.gateway.workers,
      clock: options.clock,
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
    reconfigure: reconfigureAll(chain, publisher),
    close: async (graceMs) => {
      await workers.close(graceMs);
      await stop();
    },
  };
}

/** A reloaded config: the control's chain tracker follows its networks, and every worker gets it (publisher.ts). */
function reconfigureAll(chain: ChainTracker, publisher: StatePublisher): GatewayWorkers['reconfigure'] {
  return (next, tls) => {
    chain.reconfigure(next.networks);
    publisher.publishConfig(next, tls);
  };
}
