/**
 * The control process's side of the workers' state (SPEC §11: "pushes pool, health, head and key changes
 * to the workers within 1 s"). What is pushed, when:
 *   - pools: the routing account's pools, whole, on every PoolDirectory change — at once after this
 *     process's API writes (the API awaits the directory's refresh), within the directory's 1 s poll
 *     for other processes';
 *   - health: every pool's and origin's verdict as routing reads it, checked every PUSH_CHECK_MS
 *     (250 ms) and right after workers' live reports or a pool change, sent only when it changed;
 *   - chain: canonical-chain events (head, reorg, gap, finalized) as the tracker emits them, and the
 *     state routing reads (origin heads and refusals, network head, reported head, head ceiling bound,
 *     finalized, tracked origins) right after each event or refused head claim, and every
 *     PUSH_CHECK_MS when it changed;
 *   - named states (`publishState`, e.g. the gateway key snapshot): at once; the latest of each topic is
 *     part of a new worker's `init`;
 *   - a reloaded config (`publishConfig`, SPEC §15): at once, with the gateway's certificate and key when
 *     they were read again; a worker started later gets it in its `init` (and reads the files itself).
 * Workers' messages land here too: named reports (`report` messages, e.g. gateway key usage) go to the
 * handler registered for their topic (`onReport`); affinity entries (read-your-writes, filters) are
 * relayed at once to every worker, the sender included (each keeps the later of two entries), and to
 * the other instances when there is a share between them (Redis), and kept while they count for the
 * `init` of a worker started later (relayed-affinity.ts); live health outcomes go to the
 * control's HealthView (which ejects by its rules for all workers together); chain feedback and block
 * lookups to the tracker; rate-limit leases to the lease backend and daily-quota reserves to the quota
 * backend (without one, the request fails and the worker's quota counter falls back to its own count).
 */
import type { ChainTracker } from '../chain/tracker.js';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import type { LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaBackend } from '../gateway/rpc/quota-backend.js';
import type { AffinityShare } from '../gateway/upstream/affinity-share.js';
import type { Logger } from '../log.js';
import type { HealthView } from '../model/health-view.js';
import type { Pool, PoolDirectory } from '../model/pool.js';
import type { ControlMessage, PushedChain, PushedHealth, WorkerMessage, WorkerRequest } from './messages.js';
import { RelayedAffinity } from './relayed-affinity.js';

export const PUSH_CHECK_MS = 250;

export interface StatePublisherOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  chain: ChainTracker;
  leases: LeaseBackend;
  /** Where workers' daily-quota reserves go; none: their requests fail and workers count locally. */
  quotas?: QuotaBackend | undefined;
  /**
   * Affinity entries between instances (Redis): the workers' entries are published there, and every
   * entry heard there (this instance's own again included: adopting one twice changes nothing) is relayed.
   */
  affinity?: AffinityShare | undefined;
  /** What affinity entries' `until` is compared with (wall-clock ms). */
  clock: Clock;
  logger: Logger;
  /** Sends to every worker that has had its `init`. */
  broadcast(message: ControlMessage): void;
}

export class StatePublisher {
  #options: StatePublisherOptions;
  readonly #states = new Map<string, unknown>();
  readonly #reports = new Map<string, (payload: unknown) => void>();
  readonly #affinity = new RelayedAffinity();
  readonly #stops: Array<() => void> = [];
  #lastHealth = '';
  #lastChain = '';
  #checkQueued = false;

  constructor(options: StatePublisherOptions) {
    this.#options = options;
  }

  start(): void {
    const { directory, chain, broadcast } = this.#options;
    this.#stops.push(
      directory.onChange(() => {
        broadcast({ t: 'pools', pools: this.#routed() });
        this.#checkSoon();
      }),
    );
    this.#stops.push(
      chain.addListener({
        head: (network, block) => this.#event({ t: 'chain-event', network, event: 'head', block }),
        reorg: (network, reorg) => this.#event({ t: 'chain-event', network, event: 'reorg', reorg }),
        gap: (network, from, to) => this.#event({ t: 'chain-event', network, event: 'gap', from, to }),
        finalized: (network, block) => this.#event({ t: 'chain-event', network, event: 'finalized', block }),
        // Workers learn a refused origin at once, not at the next periodic check (SPEC §20).
        refused: () => this.#checkSoon(),
      }),
    );
    this.#options.affinity?.subscribe((entry) => {
      this.#affinity.record(entry);
      broadcast({ t: 'affinity', entry });
    });
    const timer = setInterval(() => this.#check(), PUSH_CHECK_MS);
    timer.unref();
    this.#stops.push(() => clearInterval(timer));
  }

  stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
  }

  /** A named state for every worker (and every worker started later). */
  publishState(topic: string, payload: unknown): void {
    this.#states.set(topic, payload);
    this.#options.broadcast({ t: 'state', topic, payload });
  }

  /** A reloaded config for every worker (and every worker started later); the chain state follows at once. */
  publishConfig(config: Readonly<Config>, tls: TlsPair | undefined): void {
    this.#options = { ...this.#options, config };
    this.#options.broadcast({ t: 'config', config: config as Config, tls });
    this.#checkSoon();
  }

  /** Handles workers' reports of `topic` (one handler per topic; a report without one is dropped). */
  onReport(topic: string, handler: (payload: unknown) => void): void {
    this.#reports.set(topic, handler);
  }

  /** The first message of a worker: its slot, the config and everything current. */
  init(slot: number): ControlMessage {
    const { config, chain } = this.#options;
    const canonical: Record<string, ReturnType<ChainTracker['canonical']>> = {};
    for (const network of chain.networks()) canonical[network] = chain.canonical(network);
    return {
      t: 'init',
      slot,
      config: config as Config,
      pools: this.#routed(),
      health: this.#health(),
      chain: this.#chain(),
      canonical,
      states: Object.fromEntries(this.#states),
      affinity: this.#affinity.live(this.#options.clock.now()),
      clockOffsetMs: this.#options.clock === systemClock ? 0 : this.#options.clock.now() - systemClock.now(),
    };
  }

  /** A worker's message (metrics answers are the supervisor's). */
  handle(message: WorkerMessage, reply: (message: ControlMessage) => void): void {
    const { health, chain } = this.#options;
    switch (message.t) {
      case 'health-reports': {
        for (const report of message.reports) {
          if (report.ok) health.reportSuccess?.(report.pool, report.origin);
          else health.reportFailure(report.pool, report.origin, report.reason, report.kind);
        }
        if (message.reports.some((report) => !report.ok)) this.#checkSoon();
        break;
      }
      case 'chain-feedback': {
        for (const [pool, origin, number] of message.saw) chain.sawHead(pool, origin, number);
        for (const [pool, origin, number] of message.lacks) chain.lacksBlock(pool, origin, number);
        for (const [network, number] of message.reported) chain.reported(network, number);
        for (const network of message.touched) chain.touch(network);
        this.#checkSoon();
        break;
      }
      case 'affinity':
        this.#affinity.record(message.entry);
        this.#options.broadcast({ t: 'affinity', entry: message.entry });
        this.#options.affinity?.publish(message.entry);
        break;
      case 'report': {
        const handler = this.#reports.get(message.topic);
        if (handler === undefined)
          this.#options.logger.debug('worker report without a handler', { topic: message.topic });
        else handler(message.payload);
        break;
      }
      case 'request':
        this.#answer(message.request).then(
          (value) => reply({ t: 'reply', id: message.id, ok: true, value }),
          (err: unknown) =>
            reply({ t: 'reply', id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
        );
        break;
      default:
        break;
    }
  }

  async #answer(request: WorkerRequest): Promise<unknown> {
    switch (request.kind) {
      case 'block':
        return (await this.#options.chain.block(request.network, request.which)) ?? null;
      case 'anchor':
        return (await this.#options.chain.anchor(request.network, request.number)) ?? null;
      case 'lease':
        return this.#options.leases.lease(request.asks);
      case 'quota':
        if (this.#options.quotas === undefined) throw new Error('no global quota backend in the control process');
        return this.#options.quotas.reserve(request.asks);
    }
  }

  #event(message: ControlMessage): void {
    this.#options.broadcast(message);
    this.#checkSoon();
  }

  /** A check on the next turn of the event loop: several triggers in one turn make one push. */
  #checkSoon(): void {
    if (this.#checkQueued) return;
    this.#checkQueued = true;
    setImmediate(() => {
      this.#checkQueued = false;
      this.#check();
    });
  }

  #check(): void {
    const health = this.#health();
    const healthText = JSON.stringify(health);
    if (healthText !== this.#lastHealth) {
      this.#lastHealth = healthText;
      this.#options.broadcast({ t: 'health', health });
    }
    const chain = this.#chain();
    const chainText = JSON.stringify(chain);
    if (chainText !== this.#lastChain) {
      this.#lastChain = chainText;
      this.#options.broadcast({ t: 'chain-state', chain });
    }
  }

  /** The routing account's pools: all a worker routes (other accounts' pools never leave this process). */
  #routed(): Pool[] {
    const { directory, config } = this.#options;
    return directory.allPools().filter((pool) => pool.account_id === config.account_id);
  }

  #health(): PushedHealth {
    const { health } = this.#options;
    const out: PushedHealth = {};
    for (const pool of this.#routed()) {
      const origins: Record<string, boolean> = {};
      for (const origin of pool.origins) origins[origin.name] = health.originHealthy(pool.id, origin.name);
      out[pool.id] = { healthy: health.poolHealthy(pool.id), origins };
    }
    return out;
  }

  #chain(): PushedChain {
    const { chain } = this.#options;
    const pushed: PushedChain = { networks: {}, origins: [] };
    const seen = new Set<string>();
    for (const network of chain.networks()) {
      const tracked = chain.trackedOrigins(network);
      pushed.networks[network] = {
        head: chain.networkHead(network),
        reported: chain.reportedHead(network),
        bound: chain.headBound(network),
        finalized: chain.finalized(network),
        trusted: chain.trustedTip(network),
        tracked: tracked.map((t) => [t.pool.id, t.origin.name, t.usable, t.pushing]),
      };
      for (const { pool, origin, state } of tracked) {
        const key = `${pool.id}\u0000${origin.name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        // Plain fields: the tracker's records are class instances whose getters would not cross IPC.
        pushed.origins.push([
          pool.id,
          origin.name,
          {
            head: state.head,
            hash: state.hash,
            earliest: state.earliest,
            syncing: state.syncing,
            refused: state.refused,
          },
        ]);
      }
    }
    return pushed;
  }
}
