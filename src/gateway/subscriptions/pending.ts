/**
 * The newPendingTransactions source of one network (transaction hashes, one notification each).
 *
 * - Push: when the network has a usable origin with a `ws_address` (the first one in the chain tracker's
 *   order when the source starts) and the gateway passes its OriginFeeds (upstream/ws-heads.ts
 *   WsOriginFeeds: the same connect rules, reconnects and back-off as the chain's newHeads pushes), the
 *   source subscribes `eth_subscribe(["newPendingTransactions"])` there and relays each hash.
 * - Polling, without a push or while it is not live: `eth_newPendingTransactionFilter` once, then
 *   `eth_getFilterChanges(id)` every `pollMs` (1 s; timed from the end of the previous poll, so polls never
 *   overlap), through the gateway's Forwarder, whose filter affinity (upstream/filter-affinity.ts) sends
 *   the polls to the origin holding the filter. Any failure (no origin, "filter not found", an error
 *   answer) drops the filter and the next round creates a new one (hashes in between are missed, as with
 *   any filter). Polling stops, uninstalling its filter (best effort), when the push turns live, and
 *   starts again when the push is lost; around such a switch a hash may come twice or be missed.
 * The origin is chosen once per source: a source keeps it until its last subscription leaves.
 */
import type { Logger } from '../../log.js';
import type { Origin, Pool } from '../../model/pool.js';
import { Fanout, type Source } from './fanout.js';
import type { UpstreamCaller } from './upstream-call.js';

const HASH = /^0x[0-9a-fA-F]{64}$/;

/** eth_subscribe on an origin's ws_address (upstream/ws-heads.ts WsOriginFeeds implements it). */
export interface OriginFeeds {
  subscribe(
    pool: Pool,
    origin: Origin,
    params: readonly unknown[],
    listener: { result(value: unknown): void; live(up: boolean): void },
  ): () => void;
}

export interface PendingPush {
  readonly feeds: OriginFeeds;
  readonly pool: Pool;
  readonly origin: Origin;
}

export class PendingSource implements Source {
  readonly fanout: Fanout;
  readonly #poller: FilterPoller;
  readonly #endPush: (() => void) | undefined;

  constructor(network: string, upstream: UpstreamCaller, logger: Logger, pollMs: number, push?: PendingPush) {
    this.fanout = new Fanout(logger);
    const relay = (hash: unknown): void => {
      if (typeof hash === 'string' && HASH.test(hash)) this.fanout.publish(JSON.stringify(hash));
    };
    this.#poller = new FilterPoller(network, upstream, logger, pollMs, relay);
    this.#poller.start();
    this.#endPush = push?.feeds.subscribe(push.pool, push.origin, ['newPendingTransactions'], {
      result: relay,
      live: (up) => (up ? this.#poller.stop() : this.#poller.start()),
    });
  }

  stop(): void {
    this.#endPush?.();
    this.#poller.stop();
  }
}

interface PollRun {
  readonly abort: AbortController;
  filter: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** eth_newPendingTransactionFilter + eth_getFilterChanges polling; start/stop may repeat. */
class FilterPoller {
  readonly #network: string;
  readonly #upstream: UpstreamCaller;
  readonly #logger: Logger;
  readonly #pollMs: number;
  readonly #relay: (hash: unknown) => void;
  /** The current run; a stop ends it, a start begins a new one. */
  #run: PollRun | undefined;

  constructor(
    network: string,
    upstream: UpstreamCaller,
    logger: Logger,
    pollMs: number,
    relay: (hash: unknown) => void,
  ) {
    this.#network = network;
    this.#upstream = upstream;
    this.#logger = logger;
    this.#pollMs = pollMs;
    this.#relay = relay;
  }

  start(): void {
    if (this.#run !== undefined) return;
    const run: PollRun = { abort: new AbortController(), filter: undefined, timer: undefined };
    this.#run = run;
    void this.#round(run);
  }

  stop(): void {
    const run = this.#run;
    if (run === undefined) return;
    this.#run = undefined;
    clearTimeout(run.timer);
    run.abort.abort();
    if (run.filter !== undefined) this.#uninstall(run.filter);
  }

  #uninstall(filter: string): void {
    this.#upstream.call(this.#network, 'eth_uninstallFilter', [filter]).catch(() => undefined);
  }

  async #round(run: PollRun): Promise<void> {
    const live = (): boolean => this.#run === run;
    try {
      if (run.filter === undefined) {
        const id = await this.#upstream.call(this.#network, 'eth_newPendingTransactionFilter', [], run.abort.signal);
        if (typeof id !== 'string') throw new Error('eth_newPendingTransactionFilter answered no filter id');
        if (!live()) {
          this.#uninstall(id);
          return;
        }
        run.filter = id;
      } else {
        const changes = await this.#upstream.call(
          this.#network,
          'eth_getFilterChanges',
          [run.filter],
          run.abort.signal,
        );
        if (!Array.isArray(changes)) throw new Error('eth_getFilterChanges answered no list');
        if (!live()) return;
        for (const hash of changes) this.#relay(hash);
      }
    } catch (err) {
      if (!live()) return;
      run.filter = undefined;
      this.#logger.debug('pending transaction filter poll failed; a new filter follows', {
        network: this.#network,
        err,
      });
    }
    if (!live()) return;
    run.timer = setTimeout(() => void this.#round(run), this.#pollMs);
    run.timer.unref();
  }
}
