/**
 * The sinks of one shared source and the notification text they receive. The `result` JSON is built once
 * per event; each sink gets `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,
 * "result":RESULT}}` with its own subscription id. A sink that throws is logged and kept (the transport
 * closes its connection and unsubscribes it).
 *
 * Where a subscription starts (logs: SPEC §20, "a new log subscription starts at the next block"): an
 * event published with a block number reaches a sink only when that block is above the sink's `after`.
 * A sink added `waiting` holds every notification (with its block) until `start(id, after)` tells its
 * start; then what it held above `after` goes out, in order, and events without a block (removals)
 * always. `rewind(forkPoint)` (a reorg) lets every sink take the blocks from the fork point on again:
 * they became canonical after it subscribed.
 */
import type { BlockHead, ChainReorg } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import type { SubscriptionSink } from '../rpc/subscriptions-port.js';

const HEAD = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"';
const MIDDLE = '","result":';
const TAIL = '}}';

interface Member {
  readonly sink: SubscriptionSink;
  /**
   * Only blocks above this number reach the sink (-Infinity: every block). While the sink waits it is
   * +Infinity, lowered by rewinds: `start` then takes the lower of it and the start it is told.
   */
  after: number;
  /** Notifications held until the start is known, with their block (undefined: always sent). */
  held: Array<{ readonly block: number | undefined; readonly text: string }> | undefined;
}

export class Fanout {
  readonly #members = new Map<string, Member>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Adds a subscription; `waiting`: it holds what it is sent until `start` says where it begins. */
  add(id: string, sink: SubscriptionSink, waiting = false): void {
    this.#members.set(
      id,
      waiting
        ? { sink, after: Number.POSITIVE_INFINITY, held: [] }
        : { sink, after: Number.NEGATIVE_INFINITY, held: undefined },
    );
  }

  /** A waiting subscription takes blocks above `after` (undefined: every block); what it held goes out. */
  start(id: string, after: number | undefined): void {
    const member = this.#members.get(id);
    if (member?.held === undefined) return;
    const held = member.held;
    member.held = undefined;
    member.after = Math.min(member.after, after ?? Number.NEGATIVE_INFINITY);
    for (const { block, text } of held) {
      if (block === undefined || block > member.after) this.#send(id, member, text);
    }
  }

  /** Blocks from `forkPoint` on are canonical anew: every subscription takes them. */
  rewind(forkPoint: number): void {
    for (const member of this.#members.values()) member.after = Math.min(member.after, forkPoint - 1);
  }

  /** Whether some subscription takes the events of block `number` (else its work can be skipped). */
  wants(number: number): boolean {
    for (const member of this.#members.values()) {
      if (member.held !== undefined || number > member.after) return true;
    }
    return false;
  }

  /** Removes a subscription; true when it was here. */
  remove(id: string): boolean {
    return this.#members.delete(id);
  }

  get size(): number {
    return this.#members.size;
  }

  /** Sends one notification whose `result` is this JSON text to every sink (of `block`: those after it). */
  publish(result: string, block?: number): void {
    for (const [id, member] of this.#members) {
      const text = HEAD + id + MIDDLE + result + TAIL;
      if (member.held !== undefined) member.held.push({ block, text });
      else if (block === undefined || block > member.after) this.#send(id, member, text);
    }
  }

  #send(id: string, member: Member, text: string): void {
    try {
      member.sink.send(text);
    } catch (err) {
      this.#logger.error('subscription sink failed', { subscription: id, err });
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
