import type { Clock } from '../../clock.js';
import { ClientExchange } from '../../http1/index.js';

/**
 * One probe request on the project's HTTP/1.1 client (http1/): an exchange that notes when its answer's
 * head came (a check's rtt is the time from sending to the head, the wait for a connection included)
 * and keeps at most `maxBodyBytes` of the body. Past that the rest is not read and the connection is
 * dropped: monitors look for a substring or a small JSON answer, never more.
 */
export class ProbeExchange extends ClientExchange {
  readonly #clock: Clock;
  readonly #started: number;
  readonly #maxBodyBytes: number;
  #taken = 0;
  /** Milliseconds from construction to the answer's head (0 until it came). */
  rttMs = 0;

  /** Sent at once (the deadline, `timeoutMs`, runs from here: client-exchange.ts). */
  constructor(request: Buffer, timeoutMs: number, replayable: boolean, maxBodyBytes: number, clock: Clock) {
    super(request, timeoutMs, undefined, replayable);
    this.#clock = clock;
    this.#started = clock.monotonic();
    this.#maxBodyBytes = maxBodyBytes;
  }

  override head(status: number, length: number | undefined, location: string | undefined): void {
    this.rttMs = Math.round(this.#clock.monotonic() - this.#started);
    super.head(status, length, location);
  }

  override data(chunk: Buffer, borrowed: boolean): void {
    const room = this.#maxBodyBytes - this.#taken;
    if (chunk.length < room) {
      this.#taken += chunk.length;
      super.data(chunk, borrowed);
      return;
    }
    this.#taken = this.#maxBodyBytes;
    // Passed as borrowed, so it is copied: a piece of a recycled read buffer is not itself held
    // (http1/buffer-pool.ts), and that buffer goes back to the pool after this read.
    if (room > 0) super.data(chunk.subarray(0, room), true);
    this.truncate();
  }
}
