/**
 * The tracker's newHeads pushes (SPEC §9): every tracked origin with a `ws_address` gets one subscription
 * from the HeadPushSource (gateway/upstream/ws-heads.ts). While it is live the origin's head comes from
 * the push and its head poll is skipped (eth_syncing is still asked every 30 s); when it drops, polling
 * takes over at once until the source has reconnected. `sync` follows the tracked origins: a new origin,
 * or a changed `ws_address`, subscribes; an origin no longer tracked unsubscribes. `stop` ends them all.
 */
import type { OriginChain } from './origin-chain.js';
import type { BlockHead, HeadPushSource } from './types.js';

interface Subscription {
  readonly url: string;
  readonly stop: () => void;
}

export class HeadPushes {
  readonly #source: HeadPushSource;
  readonly #onHead: (record: OriginChain, header: BlockHead) => void;
  readonly #subscriptions = new Map<OriginChain, Subscription>();

  constructor(source: HeadPushSource, onHead: (record: OriginChain, header: BlockHead) => void) {
    this.#source = source;
    this.#onHead = onHead;
  }

  /** Subscribes the tracked origins that have a `ws_address`; ends the subscriptions of the others. */
  sync(records: Iterable<OriginChain>): void {
    const keep = new Set<OriginChain>();
    for (const record of records) {
      const url = record.origin.ws_address;
      if (url === undefined || url === '') continue;
      keep.add(record);
      const current = this.#subscriptions.get(record);
      if (current?.url === url) continue;
      current?.stop();
      record.pushLive = false;
      const stop = this.#source.subscribe(record.pool, record.origin, {
        head: (header) => this.#onHead(record, header),
        live: (up) => {
          record.pushLive = up;
        },
      });
      this.#subscriptions.set(record, { url, stop });
    }
    for (const [record, subscription] of this.#subscriptions) {
      if (keep.has(record)) continue;
      subscription.stop();
      record.pushLive = false;
      this.#subscriptions.delete(record);
    }
  }

  stop(): void {
    this.sync([]);
  }
}
