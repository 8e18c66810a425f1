/**
 * Writes a connection's answers to its socket, one at a time, in request order: only the first
 * unanswered exchange's answer goes out (server-connection.ts keeps the queue); one that is ready
 * earlier is parked on its exchange and written when every earlier answer is out (`next`). So is a
 * `100 Continue` the application asked for.
 *
 * - A whole answer goes out with as few writes as possible: a body up to COALESCE_BYTES (16 KiB) is
 *   copied behind the head into one buffer (one write); a larger one is written after the head under
 *   cork. HEAD requests and 1xx/204/304 answers get the head only.
 * - A streamed answer (`rest`) is framed by content-length when its length is known, else chunked
 *   (HTTP/1.1) or close-delimited (HTTP/1.0, closing the connection after); its first bytes go with the
 *   head, the rest through a StreamPump with backpressure. While it streams, no other answer (nor a
 *   `100 Continue`) is written: they are parked.
 * - Stall accounting for the connection's sweep (`stalled`): while a streamed answer is being written or
 *   waits parked behind earlier answers (counted from `answer`), the time of the last write progress is
 *   kept — a piece written, the socket draining, or a write to a socket with nothing queued (the wait
 *   for the client starts then).
 * The owner learns through `written(exchange, close, bytes)` that an answer (`bytes` of body) was handed
 * to the socket in full;
 * a stream failing midway destroys the socket instead (the client sees a truncated answer, never a
 * wrong one).
 */
import type { Socket } from 'node:net';
import type { BufferPool } from '../buffer-pool.js';
import { asksClose, CHUNKED, CLOSE_DELIMITED, CONTINUE, NO_BODY, responseHead } from './answer-head.js';
import type { ExchangeSlot, ServerAnswer } from './server-exchange.js';
import { StreamPump } from './stream-pump.js';

/** What the writer reads of its server (ServerContext in server-connection.ts has these). */
export interface WriterContext {
  /** A coarse clock (ms, performance.now()), advanced by the server's sweep. */
  readonly now: number;
  /** A streamed answer whose client takes nothing for this long is cut (ms). */
  readonly streamStallMs: number;
  /** Where streamed answers' pieces are released once written. */
  readonly buffers: BufferPool;
}

export interface WriterOwner {
  /** The first unanswered exchange: the only one whose answer may be written now. */
  readonly first: ExchangeSlot | undefined;
  /** The connection ends after `exchange`'s answer, for the connection's reasons. */
  closesAfter(exchange: ExchangeSlot): boolean;
  /** `exchange`'s answer was handed to the socket in full; `close`: the connection ends after it. */
  written(exchange: ExchangeSlot, close: boolean, bytes: number): void;
}

/** Bodies up to this size go out in the same buffer as the head (one copy, one write). */
const COALESCE_BYTES = 16 * 1024;

export class AnswerWriter {
  readonly #socket: Socket;
  readonly #ctx: WriterContext;
  readonly #owner: WriterOwner;
  #pump: StreamPump | undefined;
  /** Answers with a stream (`rest`) parked or being written: the stall cut applies while > 0. */
  #streams = 0;
  /** ctx.now at the last write progress (see the header), while #streams > 0. */
  #progressAt = 0;
  readonly #progressed = (): void => {
    this.#progressAt = this.#ctx.now;
  };

  constructor(socket: Socket, ctx: WriterContext, owner: WriterOwner) {
    this.#socket = socket;
    this.#ctx = ctx;
    this.#owner = owner;
  }

  /** Writes `answer` now if `exchange` is first and nothing streams; else parks it on the exchange. */
  answer(exchange: ExchangeSlot, answer: ServerAnswer): void {
    // A stream counts for the stall cut from now, parked or not.
    if (answer.rest !== undefined && this.#streams++ === 0) this.#progressAt = this.#ctx.now;
    if (this.#owner.first !== exchange || this.#pump !== undefined) exchange.park(answer);
    else this.#write(exchange, answer);
  }

  /** The application waits for the body of `exchange`, which asked for `100 Continue`. */
  continueWanted(exchange: ExchangeSlot): void {
    if (this.#owner.first !== exchange || this.#pump !== undefined) exchange.deferContinue();
    else if (exchange.continueNow()) this.#socket.write(CONTINUE);
  }

  /**
   * The first answer was written: the next one goes out if it is parked (true), or its pending
   * `100 Continue` (false, as when nothing is waiting).
   */
  next(): boolean {
    const next = this.#owner.first;
    if (next === undefined) return false;
    const parked = next.takeParked();
    if (parked !== undefined) {
      this.#write(next, parked);
      return true;
    }
    if (next.continueIfPending()) this.#socket.write(CONTINUE);
    return false;
  }

  /** A streamed answer is (or waits) on a socket whose client took nothing for streamStallMs. */
  stalled(now: number): boolean {
    return this.#streams > 0 && now - this.#progressAt >= this.#ctx.streamStallMs && this.#socket.writableLength > 0;
  }

  /** The socket drained: that is progress, and a paused stream reads on. */
  drained(): void {
    this.#progressAt = this.#ctx.now;
    this.#pump?.resume();
  }

  /** The connection closed: the stream being written stops reading its source. */
  abort(): void {
    this.#pump?.abort();
    this.#pump = undefined;
    this.#streams = 0;
  }

  /** Writes `exchange`'s answer: it is the first unanswered one, and nothing is streaming. */
  #write(exchange: ExchangeSlot, answer: ServerAnswer): void {
    const { status, headers, body, rest, length } = answer;
    const socket = this.#socket;
    let close = this.#owner.closesAfter(exchange) || asksClose(headers);
    const headOnly = exchange.method === 'HEAD';
    // A stream waits behind this answer, or is this one: the wait for the client starts with this write.
    if (this.#streams > 0 && socket.writableLength === 0) this.#progressAt = this.#ctx.now;
    if (rest === undefined) {
      const size = body === undefined ? 0 : body.length;
      const framing = status === 204 || status === 304 || status < 200 ? NO_BODY : size;
      const head = responseHead(status, headers, framing, close, !close && exchange.minor === 0);
      if (headOnly || size === 0 || framing === NO_BODY) {
        socket.write(head, 'latin1');
      } else if (size <= COALESCE_BYTES) {
        const out = Buffer.allocUnsafe(head.length + size);
        out.write(head, 0, 'latin1');
        (body as Buffer).copy(out, head.length);
        socket.write(out);
      } else {
        socket.cork();
        socket.write(head, 'latin1');
        socket.write(body as Buffer);
        socket.uncork();
      }
      this.#owner.written(exchange, close, headOnly || framing === NO_BODY ? 0 : size);
      return;
    }
    const first = body ?? Buffer.alloc(0);
    const framing = length !== undefined ? length : exchange.minor === 1 ? CHUNKED : CLOSE_DELIMITED;
    if (framing === CLOSE_DELIMITED) close = true;
    const head = responseHead(status, headers, framing, close, !close && exchange.minor === 0);
    if (headOnly) {
      socket.write(head, 'latin1');
      rest.destroy();
      this.#streams -= 1;
      this.#owner.written(exchange, close, 0);
      return;
    }
    socket.cork();
    socket.write(head, 'latin1');
    if (first.length > 0) {
      if (framing === CHUNKED) {
        socket.write(first.length.toString(16) + '\r\n', 'latin1');
        socket.write(first);
        socket.write('\r\n', 'latin1');
      } else {
        socket.write(first);
      }
    }
    socket.uncork();
    const pump: StreamPump = new StreamPump(
      socket,
      rest,
      framing,
      first.length,
      (ok) => {
        this.#pump = undefined;
        this.#streams -= 1;
        if (ok) this.#owner.written(exchange, close, pump.sent);
        else socket.destroy();
      },
      this.#progressed,
      this.#ctx.buffers,
    );
    this.#pump = pump;
  }
}
