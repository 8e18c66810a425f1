/**
 * One request to an origin and its answer, from the moment it is queued in a pool until its body ended
 * or it failed. The pool hands it to a connection, which writes `request` once and feeds it the
 * response (head, data, end) or an error.
 *
 * `response` resolves with the status and the whole body; with `streamAfter`, a 2xx body that grows
 * past that many bytes resolves early with its first STREAM_HEAD_BYTES bytes and `rest`, a Readable
 * of the remainder, led by the other bytes received so far: the connection's socket is paused while
 * `rest` holds STREAM_HIGH_WATER bytes or more and resumed when it is read; `rest` errors if the
 * connection fails midway, and destroying it before the end destroys the connection.
 * `abort(reason)` rejects `response` with `reason`: a queued exchange is never written; a written one
 * takes its connection down (the answer would arrive on a socket we cannot reuse). Once the answer
 * streams, `abort` no longer applies (destroy `rest` instead).
 *
 * Time: one timer per exchange for one budget, `timeoutMs`. The deadline runs from dispatch (the wait
 * for a connection, the connect and the answer's head included) until the answer is complete or, for
 * a streaming one, until the caller `keep`s the stream; then it fails the exchange with
 * ORIGIN_HEADERS_TIMEOUT (no head yet: `busy` tells a wait behind busy connections) or
 * ORIGIN_BODY_TIMEOUT (`rest` errors if it already streams). A kept stream is bounded by its connection
 * instead: no body bytes for `timeoutMs` while its reader keeps up is ORIGIN_BODY_TIMEOUT
 * (client-connection.ts, the stall rule).
 *
 * `truncate()` ends a body early: `response` resolves with the bytes so far, and the connection, whose
 * answer is unfinished, is dropped. A subclass may extend `head` and `data` to watch the answer (the
 * health probes time its head and cap its body: health/probes/probe-exchange.ts).
 * An answer to a HEAD request (`forHead`, read off the request line) has no body (RFC 9112 §6.3).
 *
 * Bytes of a large answer are views of recycled read buffers (../buffer-pool.ts), held while kept here:
 * `rest`'s reader releases each once written; a whole body releases them once copied together. The pool
 * is the one of the connection that runs the exchange (given to `start`).
 */
import { Readable } from 'node:stream';
import type { BufferPool } from '../buffer-pool.js';
import { ClientError } from './client-error.js';

export interface ClientResponse {
  readonly status: number;
  /** The whole body; or, when `rest` is set, the bytes received before the answer started streaming. */
  readonly body: Buffer;
  /** The rest of a large 2xx body, still arriving (see `streamAfter`). Reading it drives the origin. */
  readonly rest?: Readable;
  /** Content-Length the origin announced, when it did. */
  readonly length?: number;
  /** The Location header, when the origin sent one (once). */
  readonly location?: string;
  /** The Retry-After header's raw value, when the origin sent one (a 429's wait). */
  readonly retryAfter?: string;
}

/** An exchange in flight: its answer, and a way to stop it (rejects `response` with `reason`). */
export interface PendingResponse {
  readonly response: Promise<ClientResponse>;
  abort(reason: Error): void;
  /**
   * The caller holds the streaming answer from here: the deadline ends, and the stall rule bounds the
   * rest (client-connection.ts). No effect on an answer that does not stream.
   */
  keep(): void;
  /**
   * It was aborted while still waiting in its pool behind busy connections (pool.ts): it was never
   * written, and the wait says nothing about the origin's health.
   */
  readonly busy: boolean;
}

/** An answer announced or grown past this many body bytes is read into recycled buffers (`bulky`). */
export const BULKY_AFTER = 64 * 1024;

/**
 * A streaming answer's `body` is a copy of its first this many bytes (ample to show the origin's id,
 * which is ours, before `result`: origin-forwarder.ts); the bytes collected past them lead `rest` uncopied.
 */
export const STREAM_HEAD_BYTES = 4 * 1024;

/** How many bytes of a body the stream `rest` may hold before the origin is paused (backpressure). */
export const STREAM_HIGH_WATER = 256 * 1024;

/** What an exchange needs of the connection running it. */
export interface ExchangeHost {
  /** Stops the exchange: the connection is destroyed if `exchange` is still its current one. */
  cancel(exchange: ClientExchange, reason: Error): void;
  /** The exchange's stream was kept: from now on its body bytes may be at most `timeoutMs` apart. */
  watchStall(exchange: ClientExchange): void;
  pauseFor(exchange: ClientExchange): void;
  resumeFor(exchange: ClientExchange): void;
}

/** What an exchange needs of the pool that queued it. */
export interface ExchangeQueue {
  /**
   * Takes a waiting exchange out of the queue (it was aborted before a connection took it); true when
   * it was waiting for a busy connection to come free rather than for one being opened for it.
   */
  withdraw(exchange: ClientExchange): boolean;
}

export class ClientExchange implements PendingResponse {
  readonly response: Promise<ClientResponse>;
  /** The whole request (head, length, body), written with one socket write. */
  readonly request: Buffer;
  /** The deadline from dispatch; for a kept stream, the longest gap between body bytes. */
  readonly timeoutMs: number;
  /** May be sent once more on a fresh connection after a stale keep-alive socket failed (reads only). */
  readonly replayable: boolean;
  /** The request is a HEAD request: its answer has no body. */
  readonly forHead: boolean;
  #replayed = false;
  #busy = false;
  /** The pool it waits in, until a connection takes it. */
  #queue: ExchangeQueue | undefined;
  /** The connection it was written to. */
  #host: ExchangeHost | undefined;
  /** The read buffers of that connection's pool (set by `start`, before any byte of the answer). */
  #buffers!: BufferPool;
  readonly #streamAfter: number | undefined;
  #resolve!: (value: ClientResponse) => void;
  #reject!: (err: Error) => void;
  /** `response` is settled (answered, failed, aborted, or streaming). */
  #settled = false;
  /** The body ended or the exchange failed: nothing more will come. */
  #over = false;
  #status = 0;
  #length: number | undefined;
  #location: string | undefined;
  #retryAfter: string | undefined;
  #chunks: Buffer[] = [];
  #size = 0;
  #rest: Readable | undefined;
  /** The deadline, armed at construction (the caller dispatches at once) until complete or kept. */
  #deadline: NodeJS.Timeout | undefined;

  constructor(request: Buffer, timeoutMs: number, streamAfter: number | undefined, replayable: boolean) {
    this.request = request;
    this.timeoutMs = timeoutMs;
    this.#streamAfter = streamAfter;
    this.replayable = replayable;
    this.forHead = isHeadRequest(request);
    this.response = new Promise<ClientResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // The exchange rides along as the timer's argument: no closure per exchange.
    this.#deadline = setTimeout(ClientExchange.#expire, timeoutMs, this);
  }

  /** The deadline passed before the answer was complete or kept. */
  static #expire(exchange: ClientExchange): void {
    exchange.#deadline = undefined;
    const rest = exchange.#rest;
    // A stream not kept yet errors even when all its bytes are in: its reader has not taken it.
    if (rest !== undefined) {
      if (!rest.destroyed) rest.destroy(new ClientError('ORIGIN_BODY_TIMEOUT', 'the answer was not taken in time'));
      return;
    }
    if (exchange.#over) return;
    exchange.abort(
      exchange.#status === 0
        ? new ClientError('ORIGIN_HEADERS_TIMEOUT', 'the origin did not answer in time')
        : new ClientError('ORIGIN_BODY_TIMEOUT', 'the origin did not finish its answer in time'),
    );
  }

  keep(): void {
    if (this.#rest === undefined || this.#deadline === undefined) return;
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
    if (!this.#over) this.#host?.watchStall(this);
  }

  /** True once nothing more is expected of the connection for this exchange. */
  get over(): boolean {
    return this.#over;
  }

  /** Aborted while it waited behind busy connections (PendingResponse.busy). */
  get busy(): boolean {
    return this.#busy;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#over = true;
    this.#clearDeadline();
    this.#reject(reason);
    if (this.#host !== undefined) {
      this.#host.cancel(this, reason);
    } else if (this.#queue !== undefined) {
      this.#busy = this.#queue.withdraw(this);
      this.#queue = undefined;
    }
  }

  // ── Used by the pool and the connection ──────────────────────────────────────────────────────

  /** It waits in `queue` for a connection. */
  queuedIn(queue: ExchangeQueue): void {
    this.#queue = queue;
  }

  /** `host` writes it now; large answers are read into `buffers`. */
  start(host: ExchangeHost, buffers: BufferPool): void {
    this.#queue = undefined;
    this.#host = host;
    this.#buffers = buffers;
  }

  /**
   * It met a stale keep-alive socket before any byte of its answer: true (once, and only when
   * replayable) when it may be sent again on a fresh connection; it is detached from its host then.
   */
  takeReplay(): boolean {
    if (!this.replayable || this.#replayed) return false;
    this.#replayed = true;
    this.#host = undefined;
    return true;
  }

  head(status: number, length: number | undefined, location: string | undefined, retryAfter?: string): void {
    this.#status = status;
    this.#length = length;
    this.#location = location;
    this.#retryAfter = retryAfter;
  }

  /**
   * The answer is large: announced or grown past BULKY_AFTER bytes, or streaming. The connection then
   * reads it into recycled buffers (http1/buffer-pool.ts), whose bytes are kept without a copy, rather than
   * into its shared read buffer.
   */
  get bulky(): boolean {
    return this.#size >= BULKY_AFTER || (this.#length ?? 0) >= BULKY_AFTER || this.#rest !== undefined;
  }

  /**
   * Body bytes. `borrowed`: a view of the read buffer the connection reuses, so kept bytes are copied;
   * otherwise a view of a recycled read buffer (http1/buffer-pool.ts), held while kept: `rest`'s reader
   * releases it once written, and `#body` once copied into a whole body.
   */
  data(chunk: Buffer, borrowed: boolean): void {
    const rest = this.#rest;
    if (rest !== undefined) {
      if (!rest.push(this.#keep(chunk, borrowed))) this.#host?.pauseFor(this);
      return;
    }
    if (this.#settled) return;
    this.#chunks.push(this.#keep(chunk, borrowed));
    this.#size += chunk.length;
    if (
      this.#streamAfter !== undefined &&
      this.#size > this.#streamAfter &&
      this.#status >= 200 &&
      this.#status < 300
    ) {
      this.#startStreaming();
    }
  }

  end(): void {
    this.#over = true;
    // A stream's deadline lasts until it is kept or read to its end (its `destroy`).
    if (this.#rest === undefined) this.#clearDeadline();
    if (this.#rest !== undefined) {
      this.#rest.push(null);
      return;
    }
    if (this.#settled) return;
    this.#settled = true;
    const length = this.#length;
    const response: ClientResponse =
      length === undefined
        ? { status: this.#status, body: this.#body() }
        : { status: this.#status, body: this.#body(), length };
    // Location and Retry-After are rare (redirects, 429s): the usual answer keeps its two-field shape.
    if (this.#location === undefined && this.#retryAfter === undefined) {
      this.#resolve(response);
      return;
    }
    this.#resolve({
      ...response,
      ...(this.#location === undefined ? {} : { location: this.#location }),
      ...(this.#retryAfter === undefined ? {} : { retryAfter: this.#retryAfter }),
    });
  }

  /**
   * Ends the answer with the body received so far (the rest is not wanted) and drops the connection,
   * whose answer is unfinished. No effect once the answer ended, failed or streams.
   */
  truncate(): void {
    if (this.#settled || this.#over) return;
    this.end();
    this.#host?.cancel(this, new ClientError('ORIGIN_CLOSED', 'the rest of the answer was not wanted'));
  }

  fail(err: Error): void {
    if (this.#over) return;
    this.#over = true;
    if (this.#rest === undefined) this.#clearDeadline();
    if (this.#rest !== undefined) {
      this.#rest.destroy(err);
      return;
    }
    this.#settled = true;
    this.#reject(err);
  }

  #clearDeadline(): void {
    if (this.#deadline === undefined) return;
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  #keep(chunk: Buffer, borrowed: boolean): Buffer {
    if (!borrowed) {
      this.#buffers.hold(chunk);
      return chunk;
    }
    // A large answer's first bytes are copied into a recycled buffer too, so it leaves no garbage.
    return this.bulky ? this.#buffers.copyOf(chunk) : Buffer.from(chunk);
  }

  #body(): Buffer {
    const chunks = this.#chunks;
    this.#chunks = [];
    return joined(chunks, this.#size, this.#buffers);
  }

  #startStreaming(): void {
    // The head is a copy of the first STREAM_HEAD_BYTES; the rest of the bytes so far lead the stream.
    const chunks = this.#chunks;
    this.#chunks = [];
    const head = Buffer.allocUnsafe(Math.min(STREAM_HEAD_BYTES, this.#size));
    let filled = 0;
    let next = 0;
    while (filled < head.length) {
      const chunk = chunks[next] as Buffer;
      const copied = chunk.copy(head, filled);
      filled += copied;
      if (copied < chunk.length) {
        const tail = chunk.subarray(copied);
        this.#buffers.hold(tail);
        chunks[next] = tail;
      } else {
        next += 1;
      }
      this.#buffers.release(chunk);
    }
    const rest = new Readable({
      highWaterMark: STREAM_HIGH_WATER,
      read: () => this.#host?.resumeFor(this),
      destroy: (err, callback) => {
        // Destroyed before the origin finished (the client left, or a pipe failed): stop the origin.
        this.#clearDeadline();
        if (!this.#over) {
          this.#over = true;
          this.#host?.cancel(this, err ?? new Error('the reader stopped reading the answer'));
        }
        callback(err);
      },
    });
    this.#rest = rest;
    let room = true;
    for (let i = next; i < chunks.length; i += 1) room = rest.push(chunks[i]);
    if (!room) this.#host?.pauseFor(this);
    this.#settled = true;
    const length = this.#length;
    this.#resolve(
      length === undefined
        ? { status: this.#status, body: head, rest }
        : { status: this.#status, body: head, rest, length },
    );
  }
}

/** Whether `request` starts with the request line of a HEAD request. */
function isHeadRequest(request: Buffer): boolean {
  return (
    request[0] === 0x48 && request[1] === 0x45 && request[2] === 0x41 && request[3] === 0x44 && request[4] === 0x20
  );
}

/** `chunks` as one Buffer of `size` bytes; copied chunks go back to the read buffers they came from. */
function joined(chunks: Buffer[], size: number, buffers: BufferPool): Buffer {
  if (chunks.length === 1) return chunks[0] as Buffer;
  const whole = Buffer.concat(chunks, size);
  for (const chunk of chunks) buffers.release(chunk);
  return whole;
}
