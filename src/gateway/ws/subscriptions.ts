/**
 * One WebSocket connection's subscriptions: the `LocalMethods` (rpc/handler.ts) that answer
 * eth_subscribe and eth_unsubscribe on the connection instead of forwarding them.
 * - eth_subscribe: refused with WS_SUBSCRIPTION_LIMIT (-32005) when the connection holds
 *   `max_subscriptions_per_connection` (default 100) already, else handed to the hub (gateway/subscriptions/),
 *   which checks the params (-32602) and returns the gateway's own id; the answer's result is that id.
 * - eth_unsubscribe: `true` when the id is one of this connection's subscriptions (then the hub drops it),
 *   else `false` — also for another connection's id, which this connection may not end.
 * - Order: a subscription's notifications are held until the answer carrying its id went out
 *   (`announced`), so a client never sees a notification for an id it does not know yet (an eth_subscribe
 *   inside a batch is answered only when the whole batch is).
 * - `close()` (the connection ended) unsubscribes every subscription left.
 * Counts subscriptions by kind (params[0]: newHeads, logs, newPendingTransactions) for the metrics.
 */
import { SwitchyardError } from '../../errors/base.js';
import type { RpcCall } from '../rpc/request.js';
import type { LocalMethods } from '../rpc/session.js';
import type { SubscriptionSink, Subscriptions } from '../rpc/subscriptions-port.js';
import type { WsMetrics } from './metrics.js';

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

export class ConnectionSubscriptions implements LocalMethods {
  readonly #hub: Subscriptions;
  readonly #out: SubscriptionSink;
  readonly #limit: number;
  readonly #metrics: WsMetrics;
  /** Subscription id → its kind (the metrics label). */
  readonly #ids = new Map<string, string>();
  /** Subscriptions whose id the client has not been sent yet → their notifications so far, in order. */
  readonly #held = new Map<string, string[]>();

  constructor(hub: Subscriptions, out: SubscriptionSink, limit: number, metrics: WsMetrics) {
    this.#hub = hub;
    this.#out = out;
    this.#limit = limit;
    this.#metrics = metrics;
  }

  get size(): number {
    return this.#ids.size;
  }

  has(method: string): boolean {
    return method === 'eth_subscribe' || method === 'eth_unsubscribe';
  }

  answer(network: string, call: RpcCall): Buffer {
    const params = Array.isArray(call.params) ? call.params : [];
    if (call.method === 'eth_unsubscribe') {
      const id = params[0];
      if (typeof id !== 'string' || params.length !== 1) {
        throw new SwitchyardError('RPC_INVALID_PARAMS', 'eth_unsubscribe takes one param: the subscription id.', {
          details: { method: call.method },
        });
      }
      return this.#unsubscribe(id) ? TRUE : FALSE;
    }
    if (this.#ids.size >= this.#limit) {
      throw new SwitchyardError(
        'WS_SUBSCRIPTION_LIMIT',
        `This connection holds ${this.#limit} subscriptions (gateway.websocket.max_subscriptions_per_connection); unsubscribe some first.`,
        { details: { max_subscriptions_per_connection: this.#limit } },
      );
    }
    const ref: { id?: string } = {};
    const sink = { send: (notification: string) => this.#deliver(ref.id, notification) };
    const id = this.#hub.subscribe(network, call.params, sink);
    ref.id = id;
    // A notification (no id) of eth_subscribe announces nothing: its notifications go out at once.
    if (call.id !== undefined) this.#held.set(id, []);
    const kind = typeof params[0] === 'string' ? params[0] : 'unknown';
    this.#ids.set(id, kind);
    this.#metrics.subscribed(kind, 1);
    return Buffer.from(JSON.stringify(id));
  }

  /** An answer went out: the subscriptions whose id it carries send what they held. */
  announced(answer: Buffer): void {
    if (this.#held.size === 0) return;
    for (const [id, notes] of this.#held) {
      if (!answer.includes(JSON.stringify(id))) continue;
      this.#held.delete(id);
      for (const note of notes) this.#out.send(note);
    }
  }

  #deliver(id: string | undefined, notification: string): void {
    if (id === undefined || !this.#ids.has(id)) return;
    const held = this.#held.get(id);
    if (held !== undefined) held.push(notification);
    else this.#out.send(notification);
  }

  /** Ends every subscription of the connection (it closed). */
  close(): void {
    for (const id of [...this.#ids.keys()]) this.#unsubscribe(id);
  }

  #unsubscribe(id: string): boolean {
    const kind = this.#ids.get(id);
    if (kind === undefined) return false;
    this.#ids.delete(id);
    this.#held.delete(id);
    this.#metrics.subscribed(kind, -1);
    this.#hub?.unsubscribe(id);
    return true;
  }
}
