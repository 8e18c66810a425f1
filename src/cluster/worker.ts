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
 * filter affinity, stream slots, WebSocket connections and their subscriptions, the origin scores its
 * steering and hedging read (its own traffic, plus the probes the control relays; its counts go to the
 * control's book), benched origins and its share (1/workers) of each origin's max_requests_per_second.
 *
 * The gateway itself is built by gateway/gateway.ts `serveGateway`, as in one process: only where its
 * ports' state comes from differs (worker-parts.ts).
 *
 * Reload (SPEC §15): the control process re-reads the config and sends it (`config`): the worker's
 * gateway and its outbound policy take it at once (WorkerConfig; one that comes while the gateway is
 * still starting is applied as soon as it serves). A SIGHUP the worker gets itself (sent to the whole
 * process group) is ignored: the control process reloads and tells every worker.
 *
 * Life: waits for `init`, starts the gateway, answers `ready` with its URL (or `failed` with the errno
 * code when the listener cannot bind). On `shutdown` from the control, on SIGTERM/SIGINT (a signal sent
 * to the whole process group) or when the control process is gone, it drains: the listener closes,
 * requests in flight finish within the grace period (`shutdown_grace`, or the control's), WebSocket
 * connections get 1001; then it exits 0.
 */
import { outboundPolicy } from '../config/outbound.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import { type ServedGateway, serveGateway } from '../gateway/gateway.js';
import { createLogger, type Logger, logFormatFor } from '../log.js';
import { registerProcessMetrics } from '../metrics/process.js';
import { MetricsRegistry } from '../metrics/registry.js';
import type { OutboundPolicy } from '../outbound/policy.js';
import { ControlLink } from './control-link.js';
import { type ControlMessage, isMessage } from './messages.js';
import { VERIFY_TOPIC } from './shared-state.js';
import {
  buildReplicas,
  buildSharedParts,
  controlMessages,
  type InitMessage,
  type Replicas,
  type SharedParts,
  stateTopics,
  WorkerAffinity,
  type WorkerBase,
  workerBase,
} from './worker-parts.js';

/** How long a worker waits for its `init` before giving up (the control sends it right after fork). */
const INIT_TIMEOUT_MS = 30_000;
/** After draining, how long the worker waits for its event loop to empty before exiting anyway. */
const EXIT_AFTER_MS = 2_000;

export async function runGatewayWorker(): Promise<void> {
  const link = new ControlLink();
  const inbox = new ControlInbox();
  const init = await inbox.init(link);
  const config = init.config;
  const logger = createLogger({ level: config.log_level, format: logFormatFor(config.log_format) }).child({
    worker: init.slot,
  });
  const metrics = new MetricsRegistry();
  // Its CPU, memory and event loop, added to the control's at scrape time (metrics/process.ts).
  registerProcessMetrics(metrics);
  const base = workerBase(config, logger, metrics, link, init.clockOffsetMs);
  const replicas = buildReplicas(base, init);
  const shared = buildSharedParts(base);
  const affinity = new WorkerAffinity(link, init.affinity);
  const applyState = stateTopics(base, shared);
  for (const [topic, payload] of Object.entries(init.states)) applyState(topic, payload);
  const drain = new Drain(logger);
  // This process's own policy, from the same config as the control's (workers get no injected resolver).
  const live = new WorkerConfig(config, outboundPolicy(config));
  const reconfigure = (next: Config, tls: TlsPair | undefined) => live.reload(next, tls);
  inbox.handle(
    controlMessages({ base, replicas, affinity, applyState, reconfigure, drain: (graceMs) => drain.request(graceMs) }),
  );
  drainOnSignals(link, drain, () => live.config.shutdown_grace);

  const gateway = await serveWorkerGateway(base, replicas, shared, affinity, live.outbound);
  if (gateway === undefined) return;
  live.serving(gateway);
  affinity.release();
  link.send({ t: 'ready', url: gateway.url });
  logger.debug('gateway worker ready', { url: gateway.url, pid: process.pid });
  drain.serving(gateway, () => {
    replicas.health.flush();
    shared.stop();
  });
}

/** The gateway over this worker's replicas; undefined (after telling the control) when it cannot start. */
async function serveWorkerGateway(
  base: WorkerBase,
  replicas: Replicas,
  shared: SharedParts,
  affinity: WorkerAffinity,
  outbound: OutboundPolicy,
): Promise<ServedGateway | undefined> {
  const { config, logger } = base;
  try {
    return await serveGateway({
      config,
      directory: replicas.directory,
      health: replicas.health,
      chain: replicas.chain,
      storeReadiness: shared.storeReadiness,
      keys: { table: shared.keyTable, quota: shared.quota, usage: shared.usage },
      stats: shared.stats,
      scores: shared.scores,
      sends: shared.sends,
      affinityShare: affinity,
      limiter: shared.limiter,
      verifyFailures: { failed: (report) => base.link.send({ t: 'report', topic: VERIFY_TOPIC, payload: [report] }) },
      clock: base.clock,
      logger: logger.child({ part: 'gateway' }),
      metrics: base.metrics,
      outbound,
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    base.link.send({ t: 'failed', message: err instanceof Error ? err.message : String(err), code });
    logger.error('gateway worker could not start', { err, pid: process.pid });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
    process.disconnect?.();
    return undefined;
  }
}

/**
 * The config this worker serves: the one of its `init`, then each the control sent (`reload`). A reload
 * retrusts the outbound policy and reconfigures the gateway once it serves; one that comes earlier is
 * handed to it when it starts serving (`serving`).
 */
class WorkerConfig {
  config: Config;
  readonly outbound: OutboundPolicy;
  #gateway: ServedGateway | undefined;
  #pending: { config: Config; tls: TlsPair | undefined } | undefined;

  constructor(config: Config, outbound: OutboundPolicy) {
    this.config = config;
    this.outbound = outbound;
  }

  reload(config: Config, tls: TlsPair | undefined): void {
    this.config = config;
    this.outbound.retrust(config.outbound.trusted_accounts);
    if (this.#gateway === undefined) this.#pending = { config, tls };
    else this.#gateway.reconfigure(config, tls);
  }

  serving(gateway: ServedGateway): void {
    this.#gateway = gateway;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) gateway.reconfigure(pending.config, pending.tls);
  }
}

/**
 * The control's messages from the first one: `init` resolves `init()`; the others are queued until
 * `handle` is given one (messages that arrive with `init` in one read are not lost), then go to it.
 */
class ControlInbox {
  readonly #early: ControlMessage[] = [];
  #handle: ((message: ControlMessage) => void) | undefined;
  #gotInit: ((message: InitMessage) => void) | undefined;

  constructor() {
    process.on('message', (message: unknown) => {
      if (!isMessage<ControlMessage>(message)) return;
      if (message.t === 'init') this.#gotInit?.(message as InitMessage);
      else if (this.#handle === undefined) this.#early.push(message);
      else this.#handle(message);
    });
  }

  /** Says `hello` and waits (at most INIT_TIMEOUT_MS) for the control's `init`. */
  init(link: ControlLink): Promise<InitMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no init message from the control process within ${INIT_TIMEOUT_MS} ms`)),
        INIT_TIMEOUT_MS,
      );
      this.#gotInit = (message) => {
        clearTimeout(timer);
        resolve(message);
      };
      link.send({ t: 'hello' });
    });
  }

  handle(handler: (message: ControlMessage) => void): void {
    this.#handle = handler;
    for (const message of this.#early.splice(0)) handler(message);
  }
}

/** A drain asked for before the gateway serves waits for it; once serving, the first one stops it. */
class Drain {
  readonly #logger: Logger;
  #pending: number | undefined;
  #stop: ((graceMs: number) => void) | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  request(graceMs: number): void {
    if (this.#stop === undefined) this.#pending = graceMs;
    else this.#stop(graceMs);
  }

  /** The gateway serves: a drain closes it, then runs `after` (flushes), then the process exits. */
  serving(gateway: ServedGateway, after: () => void): void {
    let draining = false;
    this.#stop = (graceMs) => {
      if (draining) return;
      draining = true;
      void stop(gateway, graceMs, this.#logger, after);
    };
    if (this.#pending !== undefined) this.#stop(this.#pending);
  }
}

/**
 * SIGTERM/SIGINT (to this process or its group) and the control process going away drain the worker
 * (within `graceMs()`: the config in force); SIGHUP is the control's to act on (see the header).
 */
function drainOnSignals(link: ControlLink, drain: Drain, graceMs: () => number): void {
  const onSignal = (): void => {
    link.send({ t: 'draining' });
    drain.request(graceMs());
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => undefined);
  process.on('disconnect', () => {
    link.close();
    drain.request(graceMs());
  });
}

async function stop(gateway: ServedGateway, graceMs: number, logger: Logger, after: () => void): Promise<void> {
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
