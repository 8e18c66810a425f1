/**
 * The newPendingTransactions source of one network, by filter polling through the gateway's Forwarder:
 * `eth_newPendingTransactionFilter` once, then `eth_getFilterChanges(id)` every `pollMs` (1 s; the next
 * poll is timed from the end of the previous one, so polls never overlap), each hash sent as one
 * notification. The forwarder's filter affinity (upstream/filter-affinity.ts) sends the polls to the
 * origin that holds the filter. Any failure (no origin, "filter not found" after the origin lost it,
 * an error answer) drops the filter: the next round creates a new one (hashes in between are missed, as
 * with any filter). Stopping uninstalls the filter (best effort).
 */
import type { Logger } from '../../log.js';
import { Fanout, type Source } from './fanout.js';
import type { UpstreamCaller } from './upstream-call.js';

const HASH = /^0x[0-9a-fA-F]{64}$/;

export class PendingPollingSource implements Source {
  readonly fanout: Fanout;
  readonly #network: string;
  readonly #upstream: UpstreamCaller;
  readonly #logger: Logger;
  readonly #pollMs: number;
  readonly #abort = new AbortController();
  #filter: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(network: string, upstream: UpstreamCaller, logger: Logger, pollMs: number) {
    this.fanout = new Fanout(logger);
    this.#network = network;
    this.#upstream = upstream;
    this.#logger = logger;
    this.#pollMs = pollMs;
    void this.#round();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
    const filter = this.#filter;
    this.#filter = undefined;
    if (filter !== undefined) {
      this.#upstream.call(this.#network, 'eth_uninstallFilter', [filter]).catch(() => undefined);
    }
  }

  async #round(): Promise<void> {
    try {
      if (this.#filter === undefined) {
        const id = await this.#upstream.call(this.#network, 'eth_newPendingTransactionFilter', [], this.#abort.signal);
        if (typeof id !== 'string') throw new Error('eth_newPendingTransactionFilter answered no filter id');
        if (this.#stopped) {
          this.#upstream.call(this.#network, 'eth_uninstallFilter', [id]).catch(() => undefined);
          return;
        }
        this.#filter = id;
      } else {
        const changes = await this.#upstream.call(
          this.#network,
          'eth_getFilterChanges',
          [this.#filter],
          this.#abort.signal,
        );
        if (!Array.isArray(changes)) throw new Error('eth_getFilterChanges answered no list');
        if (this.#stopped) return;
        for (const hash of changes) {
          if (typeof hash === 'string' && HASH.test(hash)) this.fanout.publish(JSON.stringify(hash));
        }
      }
    } catch (err) {
      if (this.#stopped) return;
      this.#filter = undefined;
      this.#logger.debug('pending transaction filter poll failed; a new filter follows', {
        network: this.#network,
        err,
      });
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#round(), this.#pollMs);
    this.#timer.unref();
  }
}
