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
 * - No notification at subscribe time (as geth): a subscription hears the first event after it.
 * - One chain tracker listener for the hub's life; events go synchronously to the network's head and
 *   logs sources (a logs source queues its fetches).
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
import type { SubscriptionSink, Subscriptions } from '../rpc/subscriptions-port.js';
import type { Source } from './fanout.js';
import { HeadsSource } from './heads.js';
import { LogsSource, type LogsTuning } from './logs.js';
import { parseSubscribeParams, type SubscriptionKind, type SubscriptionRequest, sourceKey } from './params.js';
import { type OriginFeeds, type PendingPush, PendingSource } from './pending.js';
import { type UpstreamCaller, upstreamCaller } from './upstream-call.js';

export type { SubscriptionSink } from '../rpc/subscriptions-port.js';
export type { SubscriptionKind } from './params.js';

export const PENDING_POLL_MS = 1_000;

export interface SubscriptionHubDeps {
  /** The chain tracker's listeners feed heads and logs; its origins list picks a pending push origin. */
  readonly chain: Pick<ChainTracker, 'addListener' | 'trackedOrigins'>;
  readonly forwarder: Forwarder;
  readonly networks: Readonly<Record<string, NetworkConfig>>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** eth_subscribe on origins' ws_address (upstream/ws-heads.ts WsOriginFeeds); none: pending is polled. */
  readonly originFeeds?: OriginFeeds;
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
  readonly #deps: SubscriptionHubDeps;
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
    this.#upstream = upstreamCaller(deps.forwarder, deps.networks);
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

  /** eth_subscribe params → the gateway's own subscription id; throws a SwitchyardError. */
  subscribe(network: string, params: unknown, sink: SubscriptionSink): string {
    if (this.#closed) throw new SwitchyardError('GATEWAY_INTERNAL', 'The gateway is shutting down.');
    if (this.#deps.networks[network] === undefined) {
      throw new SwitchyardError('NETWORK_UNKNOWN', `Network "${network}" is not configured.`);
    }
    const request = parseSubscribeParams(params);
    const key = sourceKey(network, request);
    let entry = this.#sources.get(key);
    if (entry === undefined) {
      entry = { key, network, kind: request.kind, source: this.#start(network, request) };
      this.#sources.set(key, entry);
    }
    const id = `0x${randomBytes(16).toString('hex')}`;
    entry.source.fanout.add(id, sink);
    this.#subscriptions.set(id, entry);
    return id;
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
