/**
 * What a gateway worker (worker.ts) builds from its `init` before it serves: the replicas of the control
 * process's routing state, the parts it shares with the other workers through the control (keys, store
 * readiness, usage, statistics, origin scores, rate limits and quotas, affinity, accepted transactions),
 * and the handler of the control's messages. Each is one function so worker.ts reads as its list of steps.
 */
import { type Clock, offsetClock, systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import { OriginStats } from '../gateway/origin-stats.js';
import { LeasedLimiter } from '../gateway/rpc/leased-limiter.js';
import { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import { LeasedQuotaCounter } from '../gateway/rpc/quota-leased.js';
import { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';
import type { AffinityEntry, AffinityShare } from '../gateway/upstream/affinity-share.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { StaticKeyTable } from '../model/gateway-keys.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import { ScoreBook } from '../routing/scores/score-book.js';
import type { ControlLink } from './control-link.js';
import { IpcLeaseBackend, IpcQuotaBackend } from './lease-ipc.js';
import type { ControlMessage } from './messages.js';
import { SENDS_TOPIC, SendBatch } from './relayed-sends.js';
import { ReplicaChain } from './replica-chain.js';
import { ReplicaHealthView } from './replica-health.js';
import {
  adoptProbes,
  KEYS_TOPIC,
  keySnapshot,
  PROBES_TOPIC,
  PushedStoreReadiness,
  reportScores,
  reportStats,
  SCORES_TOPIC,
  STATS_TOPIC,
  STORE_TOPIC,
  USAGE_TOPIC,
  UsageBatch,
} from './shared-state.js';

export type InitMessage = Extract<ControlMessage, { t: 'init' }> & { config: Config };

/** The worker's process-wide dependencies. */
export interface WorkerBase {
  readonly config: Readonly<Config>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  readonly link: ControlLink;
}

/** `clockOffsetMs` (from `init`): the control's clock minus this machine's, so both read one time. */
export function workerBase(
  config: Readonly<Config>,
  logger: Logger,
  metrics: MetricsRegistry,
  link: ControlLink,
  clockOffsetMs: number,
) {
  // The control's time: its clock is the instance's (an injected one in tests of per-day counts).
  const clock = clockOffsetMs === 0 ? systemClock : offsetClock(clockOffsetMs);
  return { config, clock, logger, metrics, link } satisfies WorkerBase;
}

/** Replicas of the control's routing state: pools, health verdicts, the chain. */
export interface Replicas {
  readonly directory: PoolSnapshot;
  readonly health: ReplicaHealthView;
  readonly chain: ReplicaChain;
}

export function buildReplicas(base: WorkerBase, init: InitMessage): Replicas {
  const { link, logger } = base;
  const directory = new PoolSnapshot({
    accountId: base.config.account_id,
    onListenerError: (err) => logger.error('pool directory listener failed', { err }),
  });
  directory.replace(init.pools.map((pool) => Object.freeze(pool)));
  const health = new ReplicaHealthView(directory, init.health, (reports) =>
    link.send({ t: 'health-reports', reports }),
  );
  const chain = new ReplicaChain({
    directory,
    clock: base.clock,
    logger: logger.child({ part: 'chain' }),
    chain: init.chain,
    canonical: init.canonical,
    feedback: (batch) => link.send({ t: 'chain-feedback', ...batch }),
    request: (request, timeoutMs) => link.request(request, timeoutMs),
  });
  return { directory, health, chain };
}

/**
 * Gateway keys, their quotas and usage, and rate limits: shared with the other workers through the
 * control process (its buckets, or Redis's), each falling back to this worker's own when it cannot ask.
 * Per-origin statistics go to the control, which flushes them to the store with its own. Origin scores:
 * this worker's traffic steers its calls and goes to the control's book; the probes' outcomes come back
 * (topic `origin-probes`). Accepted transactions go to the control's ledger (relayed-sends.ts).
 */
export interface SharedParts {
  readonly keyTable: StaticKeyTable;
  readonly storeReadiness: PushedStoreReadiness;
  readonly usage: UsageBatch;
  readonly stats: OriginStats;
  readonly scores: ScoreBook;
  readonly limiter: LeasedLimiter;
  readonly quota: LeasedQuotaCounter;
  readonly sends: SendBatch;
  /** Sends what is still counted (usage, statistics, scores, accepted transactions) and stops the timers. */
  stop(): void;
}

export function buildSharedParts(base: WorkerBase): SharedParts {
  const { link, clock } = base;
  const usage = new UsageBatch((rows) => link.send({ t: 'report', topic: USAGE_TOPIC, payload: rows }));
  const stats = new OriginStats(clock);
  const stopStats = reportStats(stats, (payload) => link.send({ t: 'report', topic: STATS_TOPIC, payload }));
  const scores = new ScoreBook(clock, { reporting: true });
  const stopScores = reportScores(scores, (payload) => link.send({ t: 'report', topic: SCORES_TOPIC, payload }));
  const sends = new SendBatch((payload) => link.send({ t: 'report', topic: SENDS_TOPIC, payload }));
  const status = new SharedLimitsStatus({
    backend: 'control',
    clock,
    logger: base.logger.child({ part: 'limits' }),
    metrics: base.metrics,
  });
  return {
    keyTable: new StaticKeyTable(),
    storeReadiness: new PushedStoreReadiness(),
    usage,
    stats,
    scores,
    limiter: new LeasedLimiter({ backend: new IpcLeaseBackend(link), status, clock }),
    quota: new LeasedQuotaCounter({ backend: new IpcQuotaBackend(link), status, fallback: new LocalQuotaCounter() }),
    sends,
    stop: () => {
      usage.stop();
      stopStats();
      stopScores();
      sends.flush();
    },
  };
}

/**
 * Read-your-writes and filter affinity: what this worker records goes to the control at once, which
 * relays it to every worker, so a client's next call keeps its origin on whichever worker it lands. The
 * entries relayed before this worker started come with `init`; they, and those relayed while the
 * gateway starts (before its maps listen), are held until `release()`.
 */
export class WorkerAffinity implements AffinityShare {
  readonly #link: ControlLink;
  readonly #listeners: Array<(entry: AffinityEntry) => void> = [];
  #held: AffinityEntry[] | undefined;

  constructor(link: ControlLink, relayedBefore: readonly AffinityEntry[]) {
    this.#link = link;
    this.#held = [...relayedBefore];
  }

  publish(entry: AffinityEntry): void {
    this.#link.send({ t: 'affinity', entry });
  }

  subscribe(listener: (entry: AffinityEntry) => void): void {
    this.#listeners.push(listener);
  }

  /** An entry the control relayed: to the gateway's maps, or held while it starts. */
  adopt(entry: AffinityEntry): void {
    if (this.#held !== undefined) this.#held.push(entry);
    else for (const listener of this.#listeners) listener(entry);
  }

  /** The gateway listens now: hands over what was held. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const entry of held) this.adopt(entry);
  }
}

/**
 * Handlers of named states pushed by the control (`state` messages and `init.states`). Adding a state
 * (e.g. `keys`: the gateway key snapshot) is one entry here and one `publishState` call on the control
 * side; the other way, `link.send({ t: 'report', topic, payload })` reaches the control's
 * `onReport(topic)` handler (e.g. `key-usage`, batched like health reports).
 */
export function stateTopics(base: WorkerBase, shared: SharedParts): (topic: string, payload: unknown) => void {
  const { logger } = base;
  const topics = new Map<string, (payload: unknown) => void>([
    [
      KEYS_TOPIC,
      (payload) => {
        const snapshot = keySnapshot(payload);
        if (snapshot === undefined) logger.warn('a garbled key table from the control process was ignored');
        else shared.keyTable.replace(snapshot);
      },
    ],
    [STORE_TOPIC, (payload) => shared.storeReadiness.set(payload)],
    [PROBES_TOPIC, (payload) => adoptProbes(shared.scores, payload)],
  ]);
  return (topic, payload) => {
    const handler = topics.get(topic);
    if (handler === undefined) logger.debug('state topic without a handler', { topic });
    else handler(payload);
  };
}

/** What the control's messages reach. */
export interface MessageTargets {
  readonly base: WorkerBase;
  readonly replicas: Replicas;
  readonly affinity: WorkerAffinity;
  applyState(topic: string, payload: unknown): void;
  /** A reloaded config (and the gateway's certificate and key, read again by the control). */
  reconfigure(config: Config, tls: TlsPair | undefined): void;
  drain(graceMs: number): void;
}

/** The handler of every message from the control process after `init`. */
export function controlMessages(targets: MessageTargets): (message: ControlMessage) => void {
  const { base, replicas } = targets;
  return (message) => {
    switch (message.t) {
      case 'pools':
        replicas.directory.replace(message.pools.map((pool) => Object.freeze(pool)));
        break;
      case 'health':
        replicas.health.replace(message.health);
        break;
      case 'chain-state':
        replicas.chain.replace(message.chain);
        break;
      case 'chain-event':
        replicas.chain.event(message);
        break;
      case 'state':
        targets.applyState(message.topic, message.payload);
        break;
      case 'config':
        targets.reconfigure(message.config, message.tls);
        break;
      case 'affinity':
        targets.affinity.adopt(message.entry);
        break;
      case 'reply':
        base.link.settle(message);
        break;
      case 'metrics-ask':
        base.link.send({ t: 'metrics', id: message.id, families: base.metrics.families() });
        break;
      case 'shutdown':
        targets.drain(message.graceMs);
        break;
      case 'init':
        break;
    }
  };
}
