/**
 * One keep-alive connection (TCP, or TLS for https origins) to an origin, carrying one exchange at a
 * time (no pipelining). Its pool (pool.ts) hands it exchanges and keeps it while idle.
 *
 * Life: connecting (bounded by the connect timeout, TLS handshake included) → idle ⇄ busy → closed.
 *   - busy: the exchange's request is written with one socket write; the exchange's own deadline
 *     (client-exchange.ts) bounds it until its answer is complete or its stream is kept. A kept
 *     stream's body bytes must then come at most `timeoutMs` apart (ORIGIN_BODY_TIMEOUT, the stall
 *     rule; `watchStall`). While a streaming reader lags, the socket is paused and the wait does not
 *     count: the origin is not the slow side.
 *   - after the answer ends the connection is idle again, unless the origin said `Connection: close`
 *     (or HTTP/1.0 without keep-alive), the body was close-delimited, or bytes came after the answer.
 *   - idle: closed after `idleMs` (pool: 30 s, shorter when the origin's `Keep-Alive: timeout=N` says
 *     so), or at once when the origin closes it (FIN or error) or sends anything at all.
 *   - closed: on any error, malformed answer, timeout or abort of a written exchange — a connection is
 *     never reused after anything unexpected.
 * Outbound policy: with `endpoint.guard`, a name's addresses are checked by the guard's `lookup` on every
 * connect, and a literal IP (sockets skip lookup for those) by `guard.refusal` before any socket is
 * opened; a refused target fails the connect with the refusal (code ETARGETREFUSED, "target not
 * allowed: …"). Once per connect, never per request.
 * A socket closing before any byte of the answer to a request written on a reused socket (the origin
 * dropped the idle connection as we wrote) is a stale socket: the pool may replay a replayable exchange
 * once on a fresh connection (pool.ts); otherwise the exchange fails with the socket's error.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { BufferPool } from '../buffer-pool.js';
import { ClientError } from './client-error.js';
import type { ClientExchange, ExchangeHost } from './client-exchange.js';
import { ResponseParser, type ResponseSink } from './response-parser.js';

/**
 * A check of the addresses a connection may reach, given by the caller (the gateway builds it from its
 * outbound policy; this module knows no policy). `lookup` is handed to `net.connect` for host names;
 * `refusal` is asked first, for IP literals, and its error fails the connection attempt.
 */
export interface EndpointGuard {
  readonly lookup: net.LookupFunction;
  refusal(host: string): Error | undefined;
}

export interface Endpoint {
  readonly tls: boolean;
  /** Host name or IP address (IPv6 without brackets). */
  readonly host: string;
  readonly port: number;
  /** SNI name: the host unless it is an IP address. */
  readonly servername: string | undefined;
  /** Extra trusted CA certificates (tests only: configuration never sets it). */
  readonly ca: string | Buffer | undefined;
  /** Skip the certificate check (a monitor's `allow_insecure`; the gateway never sets it). */
  readonly insecure?: boolean;
  /** The last TLS session of this origin, offered for resumption. */
  session: Buffer | undefined;
  /** The outbound policy's check of the addresses this endpoint connects to (none: not checked). */
  readonly guard?: EndpointGuard | undefined;
}

export interface ConnectionOwner {
  /** The connection is connected and free. */
  connected(connection: ClientConnection): void;
  /** The connection finished an exchange and may take another. */
  released(connection: ClientConnection): void;
  /** The connection is gone; `connectError` is set when it never connected (the reason). */
  closed(connection: ClientConnection, connectError: Error | undefined): void;
  /** Sends `exchange` again on a fresh connection (it met a stale keep-alive socket). */
  replay(exchange: ClientExchange): void;
}

const CONNECTING = 0;
const IDLE = 1;
const BUSY = 2;
const CLOSED = 3;

export class ClientConnection implements ResponseSink, ExchangeHost {
  readonly #owner: ConnectionOwner;
  readonly #socket: net.Socket;
  readonly #parser: ResponseParser;
  /** Recycled read buffers for large answers; its `scratch` is where small answers are read into. */
  readonly #buffers: BufferPool;
  readonly #scratch: Buffer;
  #state = CONNECTING;
  #current: ClientExchange | undefined;
  /** Exchanges this connection completed. */
  #served = 0;
  /** Bytes received for the current exchange. */
  #received = 0;
  #headSeen = false;
  #paused = false;
  /** The bytes being parsed are in the pool's scratch buffer (plain TCP): whatever is kept must be copied. */
  #borrowed = false;
  #connectTimer: NodeJS.Timeout | undefined;
  /**
   * The stall timer of a kept stream (`#watching`), refreshed on every byte; fires harmlessly when
   * nothing is watched. Until then the exchange's deadline bounds it: one timer at a time.
   */
  #timer: NodeJS.Timeout | undefined;
  #timerMs = 0;
  #watching = false;
  /** Refreshed each time the connection goes idle; closes it when it fires while still idle. */
  #idleTimer: NodeJS.Timeout | undefined;
  #idleTimerMs = 0;

  constructor(owner: ConnectionOwner, endpoint: Endpoint, connectTimeoutMs: number, buffers: BufferPool) {
    this.#owner = owner;
    this.#buffers = buffers;
    this.#scratch = buffers.scratch;
    this.#parser = new ResponseParser(this);
    let socket: net.Socket;
    const refused = endpoint.guard?.refusal(endpoint.host);
    if (refused !== undefined) {
      // Never opened; fails on the next tick, once the pool has counted this connection as connecting.
      socket = new net.Socket();
      process.nextTick(() => this.#teardown(refused));
    } else if (endpoint.tls) {
      const options: tls.ConnectionOptions = { host: endpoint.host, port: endpoint.port, ALPNProtocols: ['http/1.1'] };
      if (endpoint.guard !== undefined) options.lookup = endpoint.guard.lookup;
      if (endpoint.servername !== undefined) options.servername = endpoint.servername;
      if (endpoint.ca !== undefined) options.ca = endpoint.ca;
      if (endpoint.insecure === true) options.rejectUnauthorized = false;
      if (endpoint.session !== undefined) options.session = endpoint.session;
      socket = tls.connect(options);
      socket.once('secureConnect', this.#onConnect);
      socket.on('session', (session: Buffer) => {
        endpoint.session = session;
      });
      socket.on('data', this.#onData);
    } else {
      // Plain TCP reads reach the parser directly (no Readable-stream pass per read), into the pool's
      // scratch buffer while the answer is small (no Buffer per read either: measured together, about a
      // tenth of a forwarded call's CPU; the exchange copies the few bytes it keeps), and into a
      // recycled buffer once it is large (`bulky`), whose bytes the exchange keeps without a copy.
      socket = net.connect({
        host: endpoint.host,
        port: endpoint.port,
        onread: { buffer: this.#nextReadBuffer, callback: this.#onRead },
        ...(endpoint.guard === undefined ? {} : { lookup: endpoint.guard.lookup }),
      });
      socket.once('connect', this.#onConnect);
    }
    socket.setNoDelay(true);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('close', this.#onClose);
    this.#socket = socket;
    this.#connectTimer = setTimeout(this.#onConnectTimeout, connectTimeoutMs);
    this.#connectTimer.unref();
  }

  get closed(): boolean {
    return this.#state === CLOSED;
  }

  /** Connected (idle or busy), as opposed to still connecting or closed. */
  get established(): boolean {
    return this.#state === IDLE || this.#state === BUSY;
  }

  /** Writes the exchange's request and waits for its answer. */
  run(exchange: ClientExchange): void {
    this.#state = BUSY;
    this.#current = exchange;
    this.#received = 0;
    this.#headSeen = false;
    exchange.start(this, this.#buffers);
    this.#parser.forHead = exchange.forHead;
    this.#watching = false;
    this.#socket.write(exchange.request);
  }

  /** Parks the connection until `idleMs` pass without work. */
  idle(idleMs: number): void {
    this.#state = IDLE;
    if (this.#idleTimer !== undefined && this.#idleTimerMs === idleMs) {
      this.#idleTimer.refresh();
    } else {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = setTimeout(this.#onIdleTimeout, idleMs);
      this.#idleTimer.unref();
      this.#idleTimerMs = idleMs;
    }
  }

  /** Closes the connection; a running exchange fails with `err`. */
  destroy(err: Error): void {
    this.#teardown(err);
  }

  /** The idle time the last answer allows before the origin may drop the connection; 0: do not reuse. */
  keepAliveFor(defaultMs: number): number {
    if (this.#served === 0) return defaultMs;
    if (!this.#parser.reusable) return 0;
    const hinted = this.#parser.keepAliveMs;
    // Leave a second's margin, so the socket is not reused just as the origin closes it.
    return hinted === undefined ? defaultMs : Math.min(defaultMs, hinted - 1000);
  }

  cancel(exchange: ClientExchange, reason: Error): void {
    if (this.#current === exchange) this.#teardown(reason);
  }

  watchStall(exchange: ClientExchange): void {
    if (this.#current !== exchange) return;
    this.#watching = true;
    this.#arm(exchange.timeoutMs);
  }

  pauseFor(exchange: ClientExchange): void {
    if (this.#current !== exchange || this.#paused) return;
    this.#paused = true;
    this.#socket.pause();
  }

  resumeFor(exchange: ClientExchange): void {
    if (this.#current !== exchange || !this.#paused) return;
    this.#paused = false;
    if (this.#watching) this.#timer?.refresh();
    this.#socket.resume();
  }

  onResponseHead(
    status: number,
    length: number | undefined,
    location: string | undefined,
    retryAfter: string | undefined,
  ): void {
    this.#headSeen = true;
    this.#current?.head(status, length, location, retryAfter);
  }

  onResponseData(chunk: Buffer): void {
    this.#current?.data(chunk, this.#borrowed);
  }

  onResponseEnd(): void {
    const exchange = this.#current;
    this.#current = undefined;
    this.#served += 1;
    exchange?.end();
  }

  #arm(ms: number): void {
    if (this.#timer !== undefined && this.#timerMs === ms) {
      this.#timer.refresh();
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#onTimeout, ms);
    this.#timer.unref();
    this.#timerMs = ms;
  }

  readonly #onConnect = (): void => {
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
    if (this.#state !== CONNECTING) return;
    this.#state = IDLE;
    this.#owner.connected(this);
  };

  /** Where the next read lands (Node asks after every read): a recycled buffer once the answer is large. */
  readonly #nextReadBuffer = (): Buffer => (this.#current?.bulky === true ? this.#buffers.take() : this.#scratch);

  /** Returns true: reading goes on (a lagging stream reader pauses the socket itself). */
  readonly #onRead = (length: number, buffer: Buffer): boolean => {
    this.#borrowed = buffer === this.#scratch;
    this.#onData(buffer.subarray(0, length));
    // The read is parsed: whoever kept bytes of it holds them (http1/buffer-pool.ts); drop the reader's hold.
    if (!this.#borrowed) this.#buffers.release(buffer);
    return true;
  };

  readonly #onData = (data: Buffer): void => {
    if (this.#current === undefined) {
      // Nothing was asked: an unsolicited answer (or garbage) on an idle socket. Never trust it again.
      this.#teardown(undefined);
      return;
    }
    this.#received += data.length;
    if (this.#watching) this.#timer?.refresh();
    let consumed: number;
    try {
      consumed = this.#parser.execute(data);
    } catch (err) {
      this.#teardown(err as Error);
      return;
    }
    if (this.#state !== BUSY || this.#current !== undefined) return;
    // The answer ended: reuse the connection if nothing else came and the origin allows it.
    if (consumed < data.length) {
      this.#teardown(undefined);
      return;
    }
    if (this.#paused) {
      this.#paused = false;
      this.#socket.resume();
    }
    this.#owner.released(this);
  };

  readonly #onEnd = (): void => {
    if (this.#current !== undefined) {
      try {
        this.#parser.finish(); // ends a close-delimited body
      } catch (err) {
        this.#teardown(err as Error);
        return;
      }
    }
    this.#teardown(undefined);
  };

  readonly #onError = (err: Error): void => {
    this.#teardown(err);
  };

  readonly #onClose = (): void => {
    this.#teardown(undefined);
  };

  readonly #onConnectTimeout = (): void => {
    if (this.#state !== CONNECTING) return;
    this.#teardown(new ClientError('ORIGIN_CONNECT_TIMEOUT', 'no connection to the origin within the connect timeout'));
  };

  readonly #onTimeout = (): void => {
    if (this.#current === undefined || this.#state !== BUSY || !this.#watching) return;
    if (this.#paused) {
      this.#timer?.refresh(); // our reader is the slow side, not the origin
      return;
    }
    this.#teardown(
      this.#headSeen
        ? new ClientError('ORIGIN_BODY_TIMEOUT', 'the origin stopped sending the body of its answer')
        : new ClientError('ORIGIN_HEADERS_TIMEOUT', 'the origin did not answer in time'),
    );
  };

  readonly #onIdleTimeout = (): void => {
    if (this.#state === IDLE) this.#teardown(undefined);
  };

  /**
   * Closes the connection once: tells the pool (with the reason when it never connected), then fails
   * the running exchange with `err` (or ORIGIN_CLOSED) — or hands it back for one replay when it met
   * a stale keep-alive socket.
   */
  #teardown(err: Error | undefined): void {
    if (this.#state === CLOSED) return;
    const connecting = this.#state === CONNECTING;
    const wasReused = this.#served > 0;
    this.#state = CLOSED;
    this.#parser.halt();
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#timer);
    clearTimeout(this.#idleTimer);
    this.#socket.destroy();
    const exchange = this.#current;
    this.#current = undefined;
    this.#owner.closed(
      this,
      connecting
        ? (err ?? new ClientError('ORIGIN_CONNECT_FAILED', 'the connection closed before it was established'))
        : undefined,
    );
    if (exchange === undefined || exchange.over) return;
    const stale = wasReused && this.#received === 0 && !(err instanceof ClientError) && !isAbort(err);
    if (stale && exchange.takeReplay()) {
      this.#owner.replay(exchange);
      return;
    }
    exchange.fail(
      err ?? new ClientError('ORIGIN_CLOSED', 'the origin closed the connection before its answer was complete'),
    );
  }
}

/** An abort or timeout reason from the caller (never a reason to replay). */
function isAbort(err: Error | undefined): boolean {
  return err !== undefined && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
