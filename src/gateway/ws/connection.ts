/**
 * One client's WebSocket connection to `/v1/{network}` (after the handshake of ws/upgrade.ts).
 * - Messages: every message (text, or binary with the same bytes) is one JSON-RPC request or batch and
 *   goes through the RpcHandler exactly as an HTTP body would (validation, method policy, params,
 *   `max_batch`, rate limit → a -32005 answer while the connection stays, byte-exact ids); eth_subscribe
 *   and eth_unsubscribe are answered by the connection's subscriptions (subscriptions.ts), also inside a
 *   batch. Answers are asked for whole (no streaming of large ones: a message is sent whole). A
 *   notification gets no answer. Answers go out as text messages when ready, not in request
 *   order (JSON-RPC clients match them by id). A message over `gateway.max_body_bytes` is refused by the
 *   framing (`ws` maxPayload): the connection closes with 1009.
 * - Slow consumer: after each frame queued for the client — answers, notifications, the pongs to the
 *   client's pings, our pings — bytes queued (`ws` bufferedAmount: the socket's buffer and the
 *   sender's queue) over `max_pending_bytes` (default 16 MiB) close the connection with 1008 "slow
 *   consumer". Once closing, nothing more is queued (no pong either), so a client that never reads holds
 *   at most about `max_pending_bytes` until it leaves (or `ws` drops it 30 s after the close frame).
 * - Pings from the client: more than `max_pings_per_second` (default 10) within one second (counted from
 *   the first of each one-second window, on the Clock's monotonic reading) close the connection with
 *   1008 "too many pings".
 * - Notifications: each is charged to the client as one call as it goes out (rpc/handler.ts
 *   `notification`; subscriptions.ts ends the connection's subscriptions when the charge is refused).
 * - Liveness: a ping every `ping_interval` (30 s); no pong within `pong_timeout` (30 s) drops the
 *   connection (the peer is gone or stuck: no close handshake is attempted).
 * - Close: the client's or ours ends every subscription and aborts the forwards still running for it.
 *   `shutdown()` reads no further message, waits for the answers in flight, then closes with 1001
 *   "server shutting down", or the code and reason given (4001 when the key was revoked: upgrade.ts).
 * - Request ids: each message (a call or a batch) gets an id made for it (model/request-id.ts; a
 *   message has no headers to bring one): its log lines, the `data.request_id` of the gateway's errors in
 *   its answer, the `X-Request-Id` its origins get and its access-log line carry it, beside the
 *   handshake's `connection_id`.
 */
import { setMaxListeners } from 'node:events';
import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import { requestIdOf } from '../../model/request-id.js';
import type { AccessLog } from '../http/access-log.js';
import type { RpcHandler } from '../rpc/handler.js';
import type { HttpAnswer } from '../rpc/http-answer.js';
import { RequestTrace } from '../rpc/request-trace.js';
import type { RpcSession } from '../rpc/session.js';
import type { Subscriptions } from '../rpc/subscriptions-port.js';
import type { WsMetrics } from './metrics.js';
import { ConnectionSubscriptions } from './subscriptions.js';

export interface WsLimits {
  max_subscriptions_per_connection: number;
  max_pending_bytes: number;
  /** ms */
  ping_interval: number;
  /** ms */
  pong_timeout: number;
  max_pings_per_second: number;
}

export interface WsConnectionOptions {
  handler: RpcHandler;
  network: string;
  /** API key, else remote address: the rate limit's client. */
  client: string;
  /** The remote address (behind trusted proxies: the one they name), recorded with each transaction sent. */
  address: string;
  /** The key's identity (a gateway key's id, or `static:` and a digest); undefined when anonymous. */
  key?: string | undefined;
  /** The handshake's request id. */
  connectionId?: string | undefined;
  hub: Subscriptions;
  limits: WsLimits;
  metrics: WsMetrics;
  accessLog?: AccessLog | undefined;
  clock: Clock;
  logger: Logger;
}

/** Close codes (RFC 6455 §7.4.1; 4000–4999 are the application's). */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY = 1008;
/** The connection's key was revoked, or no longer allows its network (SPEC §20). */
export const CLOSE_KEY_REVOKED = 4001;

const PING_WINDOW_MS = 1_000;

export class WsConnection {
  readonly #ws: WebSocket;
  readonly #options: WsConnectionOptions;
  readonly #subscriptions: ConnectionSubscriptions;
  readonly #session: RpcSession;
  readonly #abort = new AbortController();
  readonly #pinger: NodeJS.Timeout;
  #pongWait: NodeJS.Timeout | undefined;
  /** Messages read whose answer is not sent yet. */
  #inFlight = 0;
  #shuttingDown = false;
  #drained: (() => void) | undefined;
  /** The client's pings in the current window, and when (monotonic ms) that window began. */
  #pings = 0;
  #pingWindow = 0;
  /** Resolves once the connection is closed. */
  readonly closed: Promise<void>;

  constructor(ws: WebSocket, options: WsConnectionOptions) {
    this.#ws = ws;
    this.#options = options;
    setMaxListeners(0, this.#abort.signal);
    this.#subscriptions = new ConnectionSubscriptions(
      options.hub,
      {
        send: (notification) => this.#send(notification),
        charge: () => options.handler.notification(options.network, options.client),
      },
      options.limits.max_subscriptions_per_connection,
      options.metrics,
    );
    this.#session = { local: this.#subscriptions, stream: false };
    options.metrics.connection(1);
    this.closed = new Promise((resolve) => {
      ws.once('close', () => {
        this.#ended();
        resolve();
      });
    });
    // ws closes with 1009 itself for a message over maxPayload, and with 1002 for bad framing.
    ws.on('error', (err) => options.logger.debug('websocket error', { err }));
    ws.on('message', (data, isBinary) => this.#message(data, isBinary));
    // The server answers pings itself (`autoPong: false`, upgrade.ts): only while open, and counted.
    ws.on('ping', (data) => this.#pinged(data));
    ws.on('pong', () => {
      clearTimeout(this.#pongWait);
      this.#pongWait = undefined;
    });
    this.#pinger = setInterval(() => this.#ping(), options.limits.ping_interval);
    this.#pinger.unref();
  }

  /** Stops reading messages, waits for the answers in flight, then closes with `code` (1001) and `reason`. */
  async shutdown(code = CLOSE_GOING_AWAY, reason = 'server shutting down'): Promise<void> {
    this.#shuttingDown = true;
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    if (this.#ws.readyState === this.#ws.OPEN) this.#ws.close(code, reason);
    await this.closed;
  }

  #message(data: RawData, _isBinary: boolean): void {
    if (this.#shuttingDown) return;
    this.#options.metrics.messageIn();
    const body = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    this.#inFlight += 1;
    const { network, client } = this.#options;
    const trace = new RequestTrace(requestIdOf(undefined), this.#options.logger);
    trace.network = network;
    trace.key = this.#options.key;
    trace.bytesIn = body.length;
    const started = this.#options.clock.monotonic();
    let answer: HttpAnswer | Promise<HttpAnswer>;
    try {
      answer = this.#options.handler.handle(
        network,
        body,
        client,
        this.#abort.signal,
        this.#session,
        trace,
        this.#options.address,
      );
    } catch (err) {
      // handle() never throws; a bug here must not take the process down.
      trace.logger.error('websocket message failed', { err });
      this.#answered();
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (late) => this.#reply(late, trace, started),
        () => this.#answered(),
      );
    } else {
      this.#reply(answer, trace, started);
    }
  }

  #reply(answer: HttpAnswer, trace: RequestTrace, started: number): void {
    const seconds = (this.#options.clock.monotonic() - started) / 1000;
    const { status, body } = answer;
    const connectionId = this.#options.connectionId;
    this.#options.accessLog?.write(trace, {
      transport: 'ws',
      status,
      seconds,
      bytesOut: body?.length ?? 0,
      connectionId,
    });
    if (body === undefined) {
      this.#answered();
      return;
    }
    // The session asks for whole answers (`stream: false`): there is never a `rest` to wait for.
    this.#send(body);
    this.#subscriptions.announced(body);
    this.#answered();
  }

  #answered(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0 && this.#drained !== undefined) this.#drained();
  }

  #send(data: Buffer | string): void {
    const ws = this.#ws;
    if (ws.readyState !== ws.OPEN) return;
    ws.send(data, { binary: false });
    this.#options.metrics.messageOut();
    this.#checkPending();
  }

  /** After a frame was queued: too many bytes waiting for the client close the connection (1008). */
  #checkPending(): void {
    const ws = this.#ws;
    if (ws.readyState !== ws.OPEN || ws.bufferedAmount <= this.#options.limits.max_pending_bytes) return;
    this.#options.metrics.slowConsumer();
    this.#options.logger.info('websocket closed: slow consumer', {
      pending_bytes: ws.bufferedAmount,
      max_pending_bytes: this.#options.limits.max_pending_bytes,
    });
    ws.close(CLOSE_POLICY, 'slow consumer');
  }

  /** A ping from the client: counted against max_pings_per_second, then answered with its pong. */
  #pinged(data: Buffer): void {
    const ws = this.#ws;
    if (ws.readyState !== ws.OPEN) return;
    const now = this.#options.clock.monotonic();
    if (this.#pings === 0 || now - this.#pingWindow >= PING_WINDOW_MS) {
      this.#pingWindow = now;
      this.#pings = 0;
    }
    this.#pings += 1;
    const limit = this.#options.limits.max_pings_per_second;
    if (this.#pings > limit) {
      this.#options.logger.info('websocket closed: too many pings', { max_pings_per_second: limit });
      ws.close(CLOSE_POLICY, 'too many pings');
      return;
    }
    ws.pong(data);
    this.#checkPending();
  }

  #ping(): void {
    const ws = this.#ws;
    if (ws.readyState !== ws.OPEN || this.#pongWait !== undefined) return;
    ws.ping();
    this.#checkPending();
    this.#pongWait = setTimeout(() => {
      this.#options.logger.debug('websocket dropped: no pong', { pong_timeout_ms: this.#options.limits.pong_timeout });
      ws.terminate();
    }, this.#options.limits.pong_timeout);
    this.#pongWait.unref();
  }

  #ended(): void {
    clearInterval(this.#pinger);
    clearTimeout(this.#pongWait);
    this.#abort.abort(new Error('websocket closed'));
    this.#subscriptions.close();
    this.#options.metrics.connection(-1);
  }
}
