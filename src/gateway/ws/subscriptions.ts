/**
 * One WebSocket connection's subscriptions: the `LocalMethods` (rpc/handler.ts) that answer
 * eth_subscribe and eth_unsubscribe on the connection instead of forwarding them.
 * - eth_subscribe: refused with WS_SUBSCRIPTION_LIMIT (-32005) when the connection holds
 *   `max_subscriptions_per_connection` (default 100) already, counting those still waiting for their id,
 *   else handed to the hub (gateway/subscriptions/), which checks the params (-32602) and returns the
 *   gateway's own id, at once or (logs: once it knows where the subscription starts) later; the answer's
 *   result is that id.
 * - eth_unsubscribe: `true` when the id is one of this connection's subscriptions (then the hub drops it),
 *   else `false` — also for another connection's id, which this connection may not end.
 * - Order: a subscription's notifications are held until the answer carrying its id went out
 *   (`announced`), so a client never sees a notification for an id it does not know yet (an eth_subscribe
 *   inside a batch is answered only when the whole batch is).
 * - Price (SPEC §20): each notification is charged to the client as one call as it goes out
 *   (`NotificationOut.charge`: rate-limit token, key quota, usage). When the charge is refused (a key out
 *   of quota), every subscription of the connection ends: each gets a last notification
 *   `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"error":{"code":-32005,
 *   "message":…}}}` (after its held ones; one still waiting for its id gets it once the id is known) and
 *   is gone (eth_unsubscribe answers false). The connection stays.
 * - `close()` (the connection ended) unsubscribes every subscription left.
 * Counts subscriptions by kind (params[0]: newHeads, logs, newPendingTransactions) for the metrics.
 */
import { SwitchyardError } from '../../errors/base.js';
import type { RpcCall } from '../rpc/request.js';
import type { LocalMethods } from '../rpc/session.js';
import type { Subscriptions } from '../rpc/subscriptions-port.js';
import type { WsMetrics } from './metrics.js';

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

/** Where the connection's notifications go, and what each costs. */
export interface NotificationOut {
  send(notification: string): void;
  /**
   * Charges one notification to the client; throws a SwitchyardError when it may not be sent. A charge
   * that must wait for a shared quota's reserve answers with a promise: the notification goes out at once
   * and a rejection ends the subscriptions as a refusal would have.
   */
  charge(): void | Promise<void>;
}

interface Sub {
  readonly kind: string;
  /** Known once the hub answered. */
  id: string | undefined;
  /** The client has the answer carrying the id (or asked without an id): notifications go out at once. */
  announced: boolean;
  /** Notifications that came before then. */
  held: string[];
  /** Ended by a refused charge (no more notifications); `final` is its last one, for once it is announced. */
  refused: SwitchyardError | undefined;
  final: string | undefined;
}

export class ConnectionSubscriptions implements LocalMethods {
  readonly #hub: Subscriptions;
  readonly #out: NotificationOut;
  readonly #limit: number;
  readonly #metrics: WsMetrics;
  /** The subscriptions the client may end: id → its state. */
  readonly #live = new Map<string, Sub>();
  /** Subscriptions whose id the hub has not answered yet. */
  readonly #waiting = new Set<Sub>();
  /** Subscriptions whose id is known but not yet sent to the client. */
  readonly #unannounced = new Set<Sub>();
  #closed = false;

  constructor(hub: Subscriptions, out: NotificationOut, limit: number, metrics: WsMetrics) {
    this.#hub = hub;
    this.#out = out;
    this.#limit = limit;
    this.#metrics = metrics;
  }

  get size(): number {
    return this.#live.size;
  }

  has(method: string): boolean {
    return method === 'eth_subscribe' || method === 'eth_unsubscribe';
  }

  answer(network: string, call: RpcCall): Buffer | Promise<Buffer> {
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
    if (this.#live.size + this.#waiting.size >= this.#limit) {
      throw new SwitchyardError(
        'WS_SUBSCRIPTION_LIMIT',
        `This connection holds ${this.#limit} subscriptions (gateway.websocket.max_subscriptions_per_connection); unsubscribe some first.`,
        { details: { max_subscriptions_per_connection: this.#limit } },
      );
    }
    const kind = typeof params[0] === 'string' ? params[0] : 'unknown';
    const sub: Sub = { kind, id: undefined, announced: false, held: [], refused: undefined, final: undefined };
    const id = this.#hub.subscribe(network, call.params, { send: (text) => this.#deliver(sub, text) });
    // A notification (no id) of eth_subscribe announces nothing: its notifications go out once the id is known.
    const silent = call.id === undefined;
    if (typeof id === 'string') return this.#opened(sub, id, silent);
    this.#waiting.add(sub);
    return id.then(
      (known) => {
        this.#waiting.delete(sub);
        return this.#opened(sub, known, silent);
      },
      (err: unknown) => {
        this.#waiting.delete(sub);
        throw err;
      },
    );
  }

  /** An answer went out: the subscriptions whose id it carries send what they held. */
  announced(answer: Buffer): void {
    if (this.#unannounced.size === 0) return;
    for (const sub of this.#unannounced) {
      if (answer.includes(JSON.stringify(sub.id))) this.#announce(sub);
    }
  }

  /** Ends every subscription of the connection (it closed). */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#live.keys()]) this.#unsubscribe(id);
  }

  /** The hub answered the id: the subscription is the client's now (or ends at once: closed, refused). */
  #opened(sub: Sub, id: string, silent: boolean): Buffer {
    sub.id = id;
    if (this.#closed || sub.refused !== undefined) {
      this.#hub.unsubscribe(id);
      if (sub.refused !== undefined) sub.final = errorNotification(id, sub.refused);
    } else {
      this.#live.set(id, sub);
      this.#metrics.subscribed(sub.kind, 1);
    }
    if (!this.#closed) {
      if (silent) this.#announce(sub);
      else this.#unannounced.add(sub);
    }
    return Buffer.from(JSON.stringify(id));
  }

  #deliver(sub: Sub, text: string): void {
    if (sub.refused !== undefined) return;
    if (sub.announced) this.#emit(sub, text);
    else sub.held.push(text);
  }

  /** The client knows the id: what the subscription held goes out, then its last notification if it ended. */
  #announce(sub: Sub): void {
    this.#unannounced.delete(sub);
    sub.announced = true;
    const held = sub.held;
    sub.held = [];
    for (const text of held) {
      if (sub.refused !== undefined) break;
      this.#emit(sub, text);
    }
    if (sub.final !== undefined) this.#out.send(sub.final);
  }

  /** Sends one notification of a live, announced subscription, if it can be paid for. */
  #emit(sub: Sub, text: string): void {
    if (sub.id === undefined || !this.#live.has(sub.id)) return;
    let charged: void | Promise<void>;
    try {
      charged = this.#out.charge();
    } catch (err) {
      if (!(err instanceof SwitchyardError)) throw err;
      this.#refuseAll(err);
      return;
    }
    this.#out.send(text);
    charged?.catch((err: unknown) => {
      if (err instanceof SwitchyardError) this.#refuseAll(err);
    });
  }

  /** Every subscription of the connection ends, its last notification the refusal (SPEC §20). */
  #refuseAll(error: SwitchyardError): void {
    for (const sub of this.#waiting) sub.refused = error;
    for (const [id, sub] of [...this.#live]) {
      this.#unsubscribe(id);
      sub.refused = error;
      // Notifications it held were never paid for: only the error goes out, after the answer with its id.
      sub.held = [];
      const text = errorNotification(id, error);
      if (sub.announced) this.#out.send(text);
      else sub.final = text;
    }
  }

  #unsubscribe(id: string): boolean {
    const sub = this.#live.get(id);
    if (sub === undefined) return false;
    this.#live.delete(id);
    this.#metrics.subscribed(sub.kind, -1);
    this.#hub.unsubscribe(id);
    return true;
  }
}

/** A subscription's last notification: the error that ended it, as `params.error`. */
function errorNotification(id: string, error: SwitchyardError): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'eth_subscription',
    params: { subscription: id, error: { code: error.spec.rpc, message: error.message } },
  });
}
