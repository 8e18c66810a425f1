/**
 * A gateway worker process (SPEC §11, `gateway.workers` > 1): serves the gateway listener (node:cluster
 * shares its port among the workers; connections are handed out round-robin by the control process)
 * from replicas of the control process's state:
 *   - pools: a PoolSnapshot replaced whole by each `pools` push (sent at once on every change);
 *   - health: replica-health.ts (pushed verdicts; live outcomes sent back, batched);
 *   - chain: replica-chain.ts (pushed state and events; feedback sent back, batched);
 *   - named states (`state` messages, e.g. gateway keys): one handler per topic in STATE_TOPICS.
 *   - gateway keys and the store's readiness (shared-state.ts); rate-limit buckets and daily quotas
 *     leased from the control process over lease-ipc.ts (its buckets, or Redis's), this worker's own
 *     while the control does not answer (fail open, logged once).
 * Time: the control's clock (its offset from this machine's comes with `init`), so a key's quota day and
 * every date agree between the processes of an instance, also when the control runs an injected clock.
 * What stays per worker: the response cache, the connect demotion of refused origins (5 s), write and
 * filter affinity, stream slots, WebSocket connections and their subscriptions.
 *
 * Life: waits for `init`, starts the gateway, answers `ready` with its URL (or `failed` with the errno
 * code when the listener cannot bind). On `shutdown` from the control, on SIGTERM/SIGINT (a signal sent
 * to the whole process group) or when the control process is gone, it drains: the listener closes,
 * requests in flight finish within the grace period (`shutdown_grace`, or the control's), WebSocket
 * connections get 1001; then it exits 0.
 */
import { offsetClock, systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { GatewayChain } from '../gateway/chain-port.js';
import { serveGateway } from '../gateway/gateway.js';
import { OriginStats } from '../gateway/origin-stats.js';
import type { Forwarder } from '../gateway/rpc/forwarder.js';
import { LeasedLimiter } from '../gateway/rpc/leased-limiter.js';
import { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import { LeasedQuotaCounter } from '../gateway/rpc/quota-leased.js';
import { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';
import type { AffinityEntry, AffinityShare } from '../gateway/upstream/affinity-share.js';
import { CachingForwarder } from '../gateway/upstream/cache/caching-forwarder.js';
import { createLogger, type Logger, logFormatFor } from '../log.js';
import { registerProcessMetrics } from '../metrics/process.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { StaticKeyTable } from '../model/gateway-keys.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import { ControlLink } from './control-link.js';
import { IpcLeaseBackend, IpcQuotaBackend } from './lease-ipc.js';
import { type ControlMessage, isMessage } from './messages.js';
import { ReplicaChain } from './replica-chain.js';
import { ReplicaHealthView } from './replica-health.js';
import {
  KEYS_TOPIC,
  keySnapshot,
  PushedStoreReadiness,
  reportStats,
  STATS_TOPIC,
  STORE_TOPIC,
  USAGE_TOPIC,
  UsageBatch,
} from './shared-state.js';

/** How long a worker waits for its `init` before giving up (the control sends it right after fork). */
const INIT_TIMEOUT_MS = 30_000;
/** After draining, how long the worker waits for its event loop to empty before exiting anyway. */
const EXIT_AFTER_MS = 2_000;

/**
 * Handlers of named states pushed by the control (`state` messages and `init.states`). Adding a state
 * (e.g. `keys`: the gateway key snapshot of part K) is one entry in `topics` and one `publishState`
 * call on the control side; the other way, `link.send({ t: 'report', topic, payload })` reaches the
 * control's `onReport(topic)` handler (e.g. `key-usage`, batched like health reports).
 */
export type StateTopics = Map<string, (payload: unknown) => void>;

export async function runGatewayWorker(): Promise<void> {
  const link = new ControlLink();
  // One listener from the start: messages that arrive with `init` in one read are queued, not lost.
  const early: ControlMessage[] = [];
  let handle: ((message: ControlMessage) => void) | undefined;
  let gotInit: ((message: InitMessage) => void) | undefined;
  process.on('message', (message: unknown) => {
    if (!isMessage<ControlMessage>(message)) return;
    if (message.t === 'init') gotInit?.(message);
    else if (handle === undefined) early.push(message);
    else handle(message);
  });
  const init = await waitForInit((resolve) => {
    gotInit = resolve;
  }, link);
  const config = init.config;
  const logger = createLogger({ level: config.log_level, format: logFormatFor(config.log_format) }).child({
    worker: init.slot,
  });
  // The control's time: its clock is the instance's (an injected one in tests of per-day counts).
  const clock = init.clockOffsetMs === 0 ? systemClock : offsetClock(init.clockOffsetMs);
  const metrics = new MetricsRegistry();
  // Its CPU, memory and event loop, added to the control's at scrape time (metrics/process.ts).
  registerProcessMetrics(metrics);
  const directory = new PoolSnapshot({
    accountId: config.account_id,
    onListenerError: (err) => logger.error('pool directory listener failed', { err }),
  });
  directory.replace(init.pools.map((pool) => Object.freeze(pool)));
  const health = new ReplicaHealthView(directory, init.health, (reports) =>
    link.send({ t: 'health-reports', reports }),
  );
  const chain = new ReplicaChain({
    directory,
    clock,
    logger: logger.child({ part: 'chain' }),
    chain: init.chain,
    canonical: init.canonical,
    feedback: (batch) => link.send({ t: 'chain-feedback', ...batch }),
    request: (request, timeoutMs) => link.request(request, timeoutMs),
  });
  // Gateway keys, their quotas and usage, and rate limits: shared with the other workers through the
  // control process (its buckets, or Redis's), each falling back to this worker's own when it cannot ask.
  const keyTable = new StaticKeyTable();
  const storeReadiness = new PushedStoreReadiness();
  const usage = new UsageBatch((rows) => link.send({ t: 'report', topic: USAGE_TOPIC, payload: rows }));
  // Per-origin statistics go to the control, which flushes them to the store with its own.
  const stats = new OriginStats(clock);
  const stopStats = reportStats(stats, (payload) => link.send({ t: 'report', topic: STATS_TOPIC, payload }));
  const status = new SharedLimitsStatus({
    backend: 'control',
    clock,
    logger: logger.child({ part: 'limits' }),
    metrics,
  });
  const limiter = new LeasedLimiter({ backend: new IpcLeaseBackend(link), status, clock });
  const quota = new LeasedQuotaCounter({
    backend: new IpcQuotaBackend(link),
    status,
    fallback: new LocalQuotaCounter(),
  });
  // Read-your-writes and filter affinity: what this worker records goes to the control at once, which
  // relays it to every worker, so a client's next call keeps its origin on whichever worker it lands.
  // The entries relayed before this worker started come with `init`; they, and those relayed while the
  // gateway starts (before its maps listen), are held and handed over once it has started.
  const affinityListeners: Array<(entry: AffinityEntry) => void> = [];
  let heldAffinity: AffinityEntry[] | undefined = [...init.affinity];
  const adoptAffinity = (entry: AffinityEntry): void => {
    if (heldAffinity !== undefined) heldAffinity.push(entry);
    else for (const listener of affinityListeners) listener(entry);
  };
  const affinityShare: AffinityShare = {
    publish: (entry) => {
      link.send({ t: 'affinity', entry });
    },
    subscribe: (listener) => {
      affinityListeners.push(listener);
    },
  };
  const topics: StateTopics = new Map([
    [
      KEYS_TOPIC,
      (payload) => {
        const snapshot = keySnapshot(payload);
        if (snapshot === undefined) logger.warn('a garbled key table from the control process was ignored');
        else keyTable.replace(snapshot);
      },
    ],
    [STORE_TOPIC, (payload) => storeReadiness.set(payload)],
  ]);
  const applyState = (topic: string, payload: unknown): void => {
    const handler = topics.get(topic);
    if (handler === undefined) logger.debug('state topic without a handler', { topic });
    else handler(payload);
  };
  for (const [topic, payload] of Object.entries(init.states)) applyState(topic, payload);

  let drain: ((graceMs: number) => void) | undefined;
  let pendingDrain: number | undefined;
  handle = (message) => {
    switch (message.t) {
      case 'pools':
        directory.replace(message.pools.map((pool) => Object.freeze(pool)));
        break;
      case 'health':
        health.replace(message.health);
        break;
      case 'chain-state':
        chain.replace(message.chain);
        break;
      case 'chain-event':
        chain.event(message);
        break;
      case 'state':
        applyState(message.topic, message.payload);
        break;
      case 'affinity':
        adoptAffinity(message.entry);
        break;
      case 'reply':
        link.settle(message);
        break;
      case 'metrics-ask':
        link.send({ t: 'metrics', id: message.id, families: metrics.families() });
        break;
      case 'shutdown':
        if (drain === undefined) pendingDrain = message.graceMs;
        else drain(message.graceMs);
        break;
      case 'init':
        break;
    }
  };
  for (const message of early.splice(0)) handle(message);
  const onSignal = (): void => {
    link.send({ t: 'draining' });
    if (drain === undefined) pendingDrain = config.shutdown_grace;
    else drain(config.shutdown_grace);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('disconnect', () => {
    link.close();
    if (drain === undefined) pendingDrain = config.shutdown_grace;
    else drain(config.shutdown_grace);
  });

  let caching: CachingForwarder | undefined;
  let gateway: Awaited<ReturnType<typeof serveGateway>>;
  try {
    gateway = await serveGateway({
      config,
      directory,
      health,
      chain,
      storeReadiness,
      keys: { table: keyTable, quota, usage },
      stats,
      affinityShare,
      limiter,
      clock,
      logger: logger.child({ part: 'gateway' }),
      metrics,
      ...(config.gateway.cache_max_bytes > 0 && {
        wrapForwarder: (inner: Forwarder, tracked: GatewayChain) => {
          caching = new CachingForwarder(inner, {
            maxBytes: config.gateway.cache_max_bytes,
            chain: tracked,
            logger: logger.child({ part: 'cache' }),
            metrics,
          });
          return caching;
        },
      }),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    link.send({ t: 'failed', message: err instanceof Error ? err.message : String(err), code });
    logger.error('gateway worker could not start', { err, pid: process.pid });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
    process.disconnect?.();
    return;
  }
  const held = heldAffinity;
  heldAffinity = undefined;
  for (const entry of held) adoptAffinity(entry);
  let draining = false;
  drain = (graceMs) => {
    if (draining) return;
    draining = true;
    void stop(gateway, graceMs, logger, () => {
      caching?.close();
      health.flush();
      usage.stop();
      stopStats();
    });
  };
  link.send({ t: 'ready', url: gateway.url });
  logger.debug('gateway worker ready', { url: gateway.url, pid: process.pid });
  if (pendingDrain !== undefined) drain(pendingDrain);
}

async function stop(
  gateway: { close(graceMs: number): Promise<void> },
  graceMs: number,
  logger: Logger,
  after: () => void,
): Promise<void> {
  try {
    await gateway.close(graceMs);
    after();
  } catch (err) {
    logger.error('error while stopping the gateway worker', { err });
  }
  logger.debug('gateway worker stopped', { pid: process.pid });
  // Lets queued IPC messages go out; the timer ends a worker whose event loop does not empty.
  setTimeout(() => process.exit(0), EXIT_AFTER_MS).unref();
  if (process.connected) process.disconnect();
}

type InitMessage = Extract<ControlMessage, { t: 'init' }> & { config: Config };

function waitForInit(
  listen: (resolve: (message: InitMessage) => void) => void,
  link: ControlLink,
): Promise<InitMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no init message from the control process within ${INIT_TIMEOUT_MS} ms`)),
      INIT_TIMEOUT_MS,
    );
    listen((message) => {
      clearTimeout(timer);
      resolve(message);
    });
    link.send({ t: 'hello' });
  });
}
