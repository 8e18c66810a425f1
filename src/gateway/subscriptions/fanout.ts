/**
 * The sinks of one shared source and the notification text they receive. The `result` JSON is built once
 * per event; each sink gets `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,
 * "result":RESULT}}` with its own subscription id. A sink that throws is logged and kept (the transport
 * closes its connection and unsubscribes it).
 */
import type { BlockHead, ChainReorg } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import type { SubscriptionSink } from '../rpc/subscriptions-port.js';

const HEAD = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"';
const MIDDLE = '","result":';
const TAIL = '}}';

export class Fanout {
  readonly #sinks = new Map<string, SubscriptionSink>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(id: string, sink: SubscriptionSink): void {
    this.#sinks.set(id, sink);
  }

  /** Removes a subscription; true when it was here. */
  remove(id: string): boolean {
    return this.#sinks.delete(id);
  }

  get size(): number {
    return this.#sinks.size;
  }

  /** Sends one notification whose `result` is this JSON text to every sink. */
  publish(result: string): void {
    for (const [id, sink] of this.#sinks) {
      try {
        sink.send(HEAD + id + MIDDLE + result + TAIL);
      } catch (err) {
        this.#logger.error('subscription sink failed', { subscription: id, err });
      }
    }
  }
}

/** One shared upstream source: its sinks, and what it takes from the chain tracker when it follows it. */
export interface Source {
  readonly fanout: Fanout;
  /** Ends the source for good (its last sink left, or the hub closed). */
  stop(): void;
  head?(block: BlockHead): void;
  reorg?(reorg: ChainReorg): void;
  gap?(from: number, to: number): void;
}
