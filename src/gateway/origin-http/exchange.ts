/**
 * One request to an origin and its answer, from the moment it is queued in a pool until its body ended
 * or it failed. The pool hands it to a connection, which writes `request` once and feeds it the
 * response (head, data, end) or an error.
 *
 * `response` resolves with the status and the whole body; with `streamAfter`, a 2xx body that grows
 * past that many bytes resolves early with the bytes so far and `rest`, a Readable of the remainder:
 * it holds at most STREAM_HIGH_WATER bytes before the connection's socket is paused, resumes it when
 * read, errors if the connection fails midway, and destroying it before the end destroys the
 * connection. `abort(reason)` rejects `response` with `reason`: a queued exchange is never written; a
 * written one takes its connection down (the answer would arrive on a socket we cannot reuse). Once
 * the answer streams, `abort` no longer applies (destroy `rest` instead).
 */
import { Readable } from 'node:stream';

export interface OriginResponse {
  readonly status: number;
  /** The whole body; or, when `rest` is set, the bytes received before the answer started streaming. */
  readonly body: Buffer;
  /** The rest of a large 2xx body, still arriving (see `streamAfter`). Reading it drives the origin. */
  readonly rest?: Readable;
  /** Content-Length the origin announced, when it did. */
  readonly length?: number;
}

/** An exchange in flight: its answer, and a way to stop it (rejects `response` with `reason`). */
export interface Exchange {
  readonly response: Promise<OriginResponse>;
  abort(reason: Error): void;
}

/** Past this many body bytes an answer is read into buffers of its own (`bulky`). */
export const BULKY_AFTER = 64 * 1024;

/** How many bytes of a body the stream `rest` may hold before the origin is paused (backpressure). */
export const STREAM_HIGH_WATER = 256 * 1024;

/** What an exchange needs of the connection running it. */
export interface ExchangeHost {
  /** Stops the exchange: the connection is destroyed if `exchange` is still its current one. */
  cancel(exchange: OriginExchange, reason: Error): void;
  pauseFor(exchange: OriginExchange): void;
  resumeFor(exchange: OriginExchange): void;
}

/** What an exchange needs of the pool that queued it. */
export interface ExchangeQueue {
  /** Takes a waiting exchange out of the queue (it was aborted before a connection took it). */
  withdraw(exchange: OriginExchange): void;
}

export class OriginExchange implements Exchange {
  readonly response: Promise<OriginResponse>;
  /** The whole request (head, length, body), written with one socket write. */
  readonly request: Buffer;
  readonly timeoutMs: number;
  /** May be sent once more on a fresh connection after a stale keep-alive socket failed (reads only). */
  readonly replayable: boolean;
  replayed = false;
  /** The pool it waits in, until a connection takes it. */
  queue: ExchangeQueue | undefined;
  /** The connection it was written to. */
  host: ExchangeHost | undefined;
  readonly #streamAfter: number | undefined;
  #resolve!: (value: OriginResponse) => void;
  #reject!: (err: Error) => void;
  /** `response` is settled (answered, failed, aborted, or streaming). */
  #settled = false;
  /** The body ended or the exchange failed: nothing more will come. */
  #over = false;
  #status = 0;
  #length: number | undefined;
  #chunks: Buffer[] = [];
  #size = 0;
  #rest: Readable | undefined;

  constructor(request: Buffer, timeoutMs: number, streamAfter: number | undefined, replayable: boolean) {
    this.request = request;
    this.timeoutMs = timeoutMs;
    this.#streamAfter = streamAfter;
    this.replayable = replayable;
    this.response = new Promise<OriginResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** True once nothing more is expected of the connection for this exchange. */
  get over(): boolean {
    return this.#over;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#over = true;
    this.#reject(reason);
    if (this.host !== undefined) this.host.cancel(this, reason);
    else this.queue?.withdraw(this);
  }

  head(status: number, length: number | undefined): void {
    this.#status = status;
    this.#length = length;
  }

  /**
   * The answer is past BULKY_AFTER bytes (or streaming): the connection reads it into buffers of their
   * own, kept without a copy, rather than into its shared read buffer.
   */
  get bulky(): boolean {
    return this.#size >= BULKY_AFTER || this.#rest !== undefined;
  }

  /** Body bytes. `borrowed`: a view of a read buffer the connection reuses, so kept bytes are copied. */
  data(chunk: Buffer, borrowed: boolean): void {
    const rest = this.#rest;
    if (rest !== undefined) {
      if (!rest.push(borrowed ? Buffer.from(chunk) : chunk)) this.host?.pauseFor(this);
      return;
    }
    if (this.#settled) return;
    this.#chunks.push(borrowed ? Buffer.from(chunk) : chunk);
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
    if (this.#rest !== undefined) {
      this.#rest.push(null);
      return;
    }
    if (this.#settled) return;
    this.#settled = true;
    const length = this.#length;
    this.#resolve(
      length === undefined
        ? { status: this.#status, body: this.#body() }
        : { status: this.#status, body: this.#body(), length },
    );
  }

  fail(err: Error): void {
    if (this.#over) return;
    this.#over = true;
    if (this.#rest !== undefined) {
      this.#rest.destroy(err);
      return;
    }
    this.#settled = true;
    this.#reject(err);
  }

  #body(): Buffer {
    const chunks = this.#chunks;
    this.#chunks = [];
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size);
  }

  #startStreaming(): void {
    const head = this.#body();
    const rest = new Readable({
      highWaterMark: STREAM_HIGH_WATER,
      read: () => this.host?.resumeFor(this),
      destroy: (err, callback) => {
        // Destroyed before the origin finished (the client left, or a pipe failed): stop the origin.
        if (!this.#over) {
          this.#over = true;
          this.host?.cancel(this, err ?? new Error('the reader stopped reading the answer'));
        }
        callback(err);
      },
    });
    this.#rest = rest;
    this.#settled = true;
    const length = this.#length;
    this.#resolve(
      length === undefined
        ? { status: this.#status, body: head, rest }
        : { status: this.#status, body: head, rest, length },
    );
  }
}
