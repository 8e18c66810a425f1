/**
 * The connections to one origin (scheme, host and port): at most `connections` sockets, each carrying
 * one exchange at a time (client-connection.ts).
 *
 *   - An exchange takes the most recently used idle connection (LIFO: the warmest socket, and the others
 *     can time out when traffic drops); when none is idle it waits in a FIFO queue, and a new
 *     connection is opened while fewer are connecting than exchanges wait and the cap is not reached.
 *     A connection that connects or finishes an exchange takes the queue's head.
 *   - Idle connections close after `idleTimeoutMs` (default IDLE_TIMEOUT_MS, 30 s), or 1 s before the origin's own
 *     `Keep-Alive: timeout=N` if that is sooner; one the origin closed while idle is dropped at once.
 *   - A failed connect (refused, unreachable, TLS verification, ORIGIN_CONNECT_TIMEOUT) fails the
 *     queue's head with that error — and every waiting exchange when no connection to the origin is up,
 *     so calls fail over at once instead of each waiting for its own connect. A waiting exchange was never
 *     written, so these errors mean the request never reached the origin.
 *   - An aborted waiting exchange leaves the queue and is never written. It waited for a *busy* pool
 *     (`busy` on the exchange) when it was behind every connection being opened — every connection was
 *     carrying another exchange and none could be added (the cap): the gateway answers GATEWAY_BUSY and
 *     never blames the origin for that wait (origin-forwarder.ts). One still waiting on its own connect was not.
 *   - `hasCapacity`: an idle connection, or room under the cap to open one — a new exchange would not
 *     wait behind busy connections (origin-forwarder.ts prefers such an origin).
 *   - A replayable exchange that met a stale keep-alive socket (client-connection.ts) goes back to the front
 *     of the queue, once.
 *   - `close()` (the origin left the configuration) refuses new exchanges, closes idle connections and
 *     lets running and waiting ones finish; `destroy()` fails everything with ORIGIN_POOL_CLOSED.
 */
import type { BufferPool } from '../buffer-pool.js';
import { ClientConnection, type ConnectionOwner, type Endpoint } from './client-connection.js';
import { ClientError } from './client-error.js';
import type { ClientExchange, ExchangeQueue } from './client-exchange.js';

/** How long an idle keep-alive connection is kept when the origin does not ask for less. */
export const IDLE_TIMEOUT_MS = 30_000;

export interface EndpointPoolOptions {
  /** Most sockets open to the origin at once. */
  connections: number;
  connectTimeoutMs: number;
  /** Where large answers are read into (recycled; the server writing them out releases them there). */
  buffers: BufferPool;
  /** How long an idle connection is kept when the origin does not ask for less (default IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
}

export class EndpointPool implements ConnectionOwner, ExchangeQueue {
  readonly #endpoint: Endpoint;
  readonly #options: EndpointPoolOptions;
  readonly #all = new Set<ClientConnection>();
  /** Idle connections, most recently used last. */
  readonly #idle: ClientConnection[] = [];
  /** Exchanges waiting for a connection, oldest first. */
  readonly #queue: ClientExchange[] = [];
  #connecting = 0;
  #closing = false;

  constructor(endpoint: Endpoint, options: EndpointPoolOptions) {
    this.#endpoint = endpoint;
    this.#options = options;
  }

  /** Open connections (connecting, idle or busy). */
  get size(): number {
    return this.#all.size;
  }

  /** Exchanges waiting for a connection. */
  get waiting(): number {
    return this.#queue.length;
  }

  dispatch(exchange: ClientExchange): void {
    if (this.#closing) {
      exchange.fail(new ClientError('ORIGIN_POOL_CLOSED', 'the origin client was closed'));
      return;
    }
    const connection = this.#idle.pop();
    if (connection !== undefined) {
      connection.run(exchange);
      return;
    }
    exchange.queuedIn(this);
    this.#queue.push(exchange);
    this.#grow();
  }

  /** An idle connection, or room to open one: a new exchange would not wait for a busy connection. */
  get hasCapacity(): boolean {
    return this.#idle.length > 0 || this.#all.size < this.#options.connections;
  }

  withdraw(exchange: ClientExchange): boolean {
    const at = this.#queue.indexOf(exchange);
    if (at >= 0) this.#queue.splice(at, 1);
    // The first `#connecting` waiting exchanges each have a connection being opened for them (#grow);
    // one behind them waited only for a busy connection to come free.
    return at >= this.#connecting;
  }

  connected(connection: ClientConnection): void {
    this.#connecting -= 1;
    this.#next(connection);
  }

  released(connection: ClientConnection): void {
    this.#next(connection);
  }

  closed(connection: ClientConnection, connectError: Error | undefined): void {
    if (!this.#all.delete(connection)) return;
    const idle = this.#idle.indexOf(connection);
    if (idle >= 0) this.#idle.splice(idle, 1);
    if (connectError !== undefined) {
      this.#connecting -= 1;
      this.#queue.shift()?.fail(connectError);
      let up = false;
      for (const other of this.#all) up ||= other.established;
      if (!up) for (const waiting of this.#queue.splice(0)) waiting.fail(connectError);
    }
    this.#grow();
  }

  replay(exchange: ClientExchange): void {
    exchange.queuedIn(this);
    this.#queue.unshift(exchange);
    this.#grow();
  }

  /** Refuses new exchanges; idle connections close now, busy ones when their exchange ends. */
  close(): void {
    this.#closing = true;
    for (const connection of this.#idle.splice(0)) connection.destroy(poolClosed());
  }

  /** Closes every connection and fails every exchange, running or waiting. */
  destroy(): void {
    this.#closing = true;
    const err = poolClosed();
    for (const waiting of this.#queue.splice(0)) waiting.fail(err);
    for (const connection of [...this.#all]) connection.destroy(err);
  }

  /** Gives a free connection the oldest waiting exchange, or parks it. */
  #next(connection: ClientConnection): void {
    const exchange = this.#queue.shift();
    if (exchange !== undefined) {
      connection.run(exchange);
      return;
    }
    const idleMs = connection.keepAliveFor(this.#options.idleTimeoutMs ?? IDLE_TIMEOUT_MS);
    if (this.#closing || idleMs <= 0) {
      connection.destroy(poolClosed());
      return;
    }
    connection.idle(idleMs);
    this.#idle.push(connection);
  }

  /** Opens connections while exchanges wait for more than are connecting, up to the cap. */
  #grow(): void {
    while (this.#connecting < this.#queue.length && this.#all.size < this.#options.connections) {
      this.#connecting += 1;
      this.#all.add(new ClientConnection(this, this.#endpoint, this.#options.connectTimeoutMs, this.#options.buffers));
    }
  }
}

function poolClosed(): ClientError {
  return new ClientError('ORIGIN_POOL_CLOSED', 'the origin client was closed');
}
