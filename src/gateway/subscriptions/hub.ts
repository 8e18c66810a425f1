/**
 * The subscription hub (SPEC §10): `eth_subscribe` / `eth_unsubscribe` for the WebSocket transport
 * (gateway/ws/), which counts subscriptions per connection and unsubscribes each when a connection closes.
 *
 * - Ids are the gateway's own: "0x" + 32 lowercase hex from 16 random bytes (unguessable; another
 *   client cannot unsubscribe what it cannot name). `unsubscribe` of an unknown id answers false.
 * - One upstream source per (network, kind, normalised filter) (params.ts `sourceKey`), shared by every
 *   subscription with that key; it starts with the first subscription and stops when the last leaves:
 *     newHeads               heads.ts — the chain tracker's head events;
 *     logs                   logs.ts  — eth_getLogs by block hash per canonical head, removals on reorg;
 *     newPendingTransactions pending.ts — an origin's ws_address subscription (`originFeeds`), else
 *                            filter polling (every `pendingPollMs`, default 1 s).
 * - No notification at subscribe time (as geth): a subscription hears the first event after it. A logs
 *   subscription starts at the next block (SPEC §20): its answer waits for the block it starts after
 *   (`startBlock`), and it gets the logs of later blocks only (reorgs aside: fanout.ts).
 * - A logs filter over `filterLimits` (rpc/log-filter-limits.ts) is refused (-32602) before anything starts.
 * - One chain tracker listener for the hub's life; events go synchronously to the network's head and
 *   logs sources (a logs source queues its fetches).
 * - A config reload (`reconfigure`) changes the networks and filter limits for the next eth_subscribe;
 *   sources running go on (their upstream calls take the network's pools in force at each call).
 * Errors: bad params RPC_INVALID_PARAMS (-32602); a network that is not configured NETWORK_UNKNOWN.
 */
import { randomBytes } from 'node:crypto';
import type { ChainTracker } from '../../chain/tracker.js';
import type { ChainListener } from '../../chain/types.js';
import type { Clock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';
import type { Logger } from '../../log.js';
import type { Forwarder } from '../rpc/forwarder.js';
import type { LogFilterLimits } from '../rpc/log-filter-limits.js';
import type { SubscriptionSink, Subscriptions } from '../rpc/subscriptions-port.js';
import type { Source } from './fanout.js';
import { HeadsSource } from './heads.js';
import { LogsSource, type LogsTuning, MAX_QUEUED_BLOCKS } from './logs.js';
import { parseSubscribeParams, type SubscriptionKind, type SubscriptionRequest, sourceKey } from './params.js';
import { type OriginFeeds, type PendingPush, PendingSource } from './pending.js';
import { type UpstreamCaller, upstreamCaller } from './upstream-call.js';

export type { SubscriptionSink } from '../rpc/subscriptions-port.js';
export type { SubscriptionKind } from './params.js';

export const PENDING_POLL_MS = 1_000;
/** Blocks an origin's head may be above the tracker's network head and still set a logs subscription's start. */
export const MAX_START_LEAD = MAX_QUEUED_BLOCKS;

export interface SubscriptionHubDeps {
  /**
   * The chain tracker's listeners feed heads and logs; its origins list picks a pending push origin; its
   * network head bounds where a logs subscription starts.
   */
  readonly chain: Pick<ChainTracker, 'addListener' | 'trackedOrigins' | 'networkHead'>;
  readonly forwarder: Forwarder;
  readonly networks: Readonly<Record<string, NetworkConfig>>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** eth_subscribe on origins' ws_address (upstream/ws-heads.ts WsOriginFeeds); none: pending is polled. */
  readonly originFeeds?: OriginFeeds;
  /** How large a logs filter may be (`gateway.websocket`); none: only the standard's 4 topic positions. */
  readonly filterLimits?: LogFilterLimits;
  /** Tests: faster pending polls and logs retries. */
  readonly tuning?: Partial<LogsTuning & { pendingPollMs: number }>;
}

interface Entry {
  readonly key: string;
  readonly network: string;
  readonly kind: SubscriptionKind;
  readonly source: Source;
}

export class SubscriptionHub implements Subscriptions {
  #deps: SubscriptionHubDeps;
  readonly #upstream: UpstreamCaller;
  /** source key → the source and its kind. */
  readonly #sources = new Map<string, Entry>();
  /** subscription id → the entry its source is in. */
  readonly #subscriptions = new Map<string, Entry>();
  /** network → its sources that follow the chain tracker. */
  readonly #chainSources = new Map<string, Set<Source>>();
  readonly #removeListener: () => void;
  #closed = false;

  constructor(deps: SubscriptionHubDeps) {
    this.#deps = deps;
    this.#upstream = upstreamCaller(deps.forwarder, () => this.#deps.networks);
    const listener: ChainListener = {
      head: (network, block) => {
        for (const source of this.#chainSources.get(network) ?? []) source.head?.(block);
      },
      reorg: (network, reorg) => {
        for (const source of this.#chainSources.get(network) ?? []) source.reorg?.(reorg);
      },
      gap: (network, from, to) => {
        for (const source of this.#chainSources.get(network) ?? []) source.gap?.(from, to);
      },
    };
    this.#removeListener = deps.chain.addListener(listener);
  }

  /** Reloaded networks and `gateway.websocket.max_filter_*` (see the header). */
  reconfigure(settings: Pick<SubscriptionHubDeps, 'networks' | 'filterLimits'>): void {
    this.#deps = { ...this.#deps, ...settings };
  }

  /**
   * eth_subscribe params → the gateway's own subscription id (for logs, once its start is known: the
   * promise never rejects); throws a SwitchyardError.
   */
  subscribe(network: string, params: unknown, sink: SubscriptionSink): string | Promise<string> {
    if (this.#closed) throw new SwitchyardError('GATEWAY_INTERNAL', 'The gateway is shutting down.');
    if (this.#deps.networks[network] === undefined) {
      throw new SwitchyardError('NETWORK_UNKNOWN', `Network "${network}" is not configured.`);
    }
    const request = parseSubscribeParams(params, this.#deps.filterLimits);
    const key = sourceKey(network, request);
    let entry = this.#sources.get(key);
    if (entry === undefined) {
      entry = { key, network, kind: request.kind, source: this.#start(network, request) };
      this.#sources.set(key, entry);
    }
    const id = `0x${randomBytes(16).toString('hex')}`;
    const logs = request.kind === 'logs';
    // A logs subscription joins at once, holding what comes until its start is known (fanout.ts).
    entry.source.fanout.add(id, sink, logs);
    this.#subscriptions.set(id, entry);
    if (!logs) return id;
    const source = entry.source;
    return this.#startBlock(network).then((after) => {
      source.fanout.start(id, after);
      return id;
    });
  }

  /** Ends a subscription; false when the id is unknown (or already ended). */
  unsubscribe(id: string): boolean {
    if (typeof id !== 'string') return false;
    const key = id.toLowerCase();
    const entry = this.#subscriptions.get(key);
    if (entry === undefined) return false;
    this.#subscriptions.delete(key);
    entry.source.fanout.remove(key);
    if (entry.source.fanout.size === 0) this.#stop(entry);
    return true;
  }

  /** Stops every source and forgets every subscription; the hub takes no new ones. */
  close(): void {
    this.#closed = true;
    this.#removeListener();
    for (const entry of this.#sources.values()) entry.source.stop();
    this.#sources.clear();
    this.#subscriptions.clear();
    this.#chainSources.clear();
  }

  /** Live subscriptions by kind (metrics). */
  counts(): Record<SubscriptionKind, number> {
    const counts: Record<SubscriptionKind, number> = { newHeads: 0, logs: 0, newPendingTransactions: 0 };
    for (const entry of this.#subscriptions.values()) counts[entry.kind] += 1;
    return counts;
  }

  /** Upstream sources running now (tests, metrics). */
  get sourceCount(): number {
    return this.#sources.size;
  }

  /**
   * The block a new logs subscription starts after: the higher of the network head the tracker knows and
   * the head an origin answers now (eth_blockNumber through the forwarder, never cached: a block mined
   * just before the subscription may not have been polled yet). An answer more than MAX_START_LEAD blocks
   * above a known network head is not believed. Without an answer the known head; without either, none
   * (every block). Never rejects.
   */
  async #startBlock(network: string): Promise<number | undefined> {
    let seen: number | undefined;
    try {
      const result = await this.#upstream.call(network, 'eth_blockNumber', []);
      const number = typeof result === 'string' && result.startsWith('0x') ? Number(result) : Number.NaN;
      if (Number.isSafeInteger(number)) seen = number;
    } catch (err) {
      this.#deps.logger.debug('eth_blockNumber for a new logs subscription failed; it starts at the known head', {
        network,
        err,
      });
    }
    const known = this.#deps.chain.networkHead(network);
    if (seen === undefined || (known !== undefined && seen > known + MAX_START_LEAD)) return known;
    return known === undefined ? seen : Math.max(known, seen);
  }

  #start(network: string, request: SubscriptionRequest): Source {
    const { logger, tuning } = this.#deps;
    const log = logger.child({ part: 'subscriptions' });
    if (request.kind === 'newPendingTransactions') {
      return new PendingSource(
        network,
        this.#upstream,
        log,
        tuning?.pendingPollMs ?? PENDING_POLL_MS,
        this.#pendingPush(network),
      );
    }
    const source =
      request.kind === 'newHeads'
        ? new HeadsSource(log)
        : new LogsSource(network, request.filter, this.#upstream, log, {
            retryMs: tuning?.retryMs ?? 250,
            maxRetryMs: tuning?.maxRetryMs ?? 5_000,
          });
    let set = this.#chainSources.get(network);
    if (set === undefined) {
      set = new Set();
      this.#chainSources.set(network, set);
    }
    set.add(source);
    return source;
  }

  /** The first usable origin of the network with a ws_address, when the gateway gave origin feeds. */
  #pendingPush(network: string): PendingPush | undefined {
    const feeds = this.#deps.originFeeds;
    if (feeds === undefined) return undefined;
    const tracked = this.#deps.chain.trackedOrigins(network).find((t) => t.usable && t.origin.ws_address != null);
    return tracked === undefined ? undefined : { feeds, pool: tracked.pool, origin: tracked.origin };
  }

  #stop(entry: Entry): void {
    this.#sources.delete(entry.key);
    const set = this.#chainSources.get(entry.network);
    set?.delete(entry.source);
    if (set?.size === 0) this.#chainSources.delete(entry.network);
    entry.source.stop();
  }
}
