/**
 * One client connection (TCP or TLS): feeds the parser, hands each request to the application as an
 * Exchange as soon as its head is parsed (with its body when the body came in the same read), and
 * writes answers strictly in request order.
 *
 * - Keep-alive: HTTP/1.1 unless the request says `Connection: close`; HTTP/1.0 only when it asks
 *   (`Connection: keep-alive`, echoed in the answer). An answer with `connection: close` (caller
 *   header, refused request, shutdown) ends the connection once it is written.
 * - Pipelining: requests may arrive back to back; each is handled at once, and an answer that is
 *   ready before earlier ones waits (parked) until they are written. Reading stops (socket paused)
 *   while `pipelineDepth` (16) requests are unanswered or their bodies hold ≥ maxBodyBytes, and while
 *   the socket's write buffer is full; it resumes when answers drain.
 * - Body not read by the application: when it answers first, the rest of the body is read and
 *   dropped (the connection stays usable), except after `Expect: 100-continue` without a `100`
 *   sent, where the client may never send it: then the answer closes the connection.
 * - `Expect: 100-continue`: `100 Continue` is written when the application asks for the body (and
 *   every earlier answer is out), never when it answers first.
 * - Timeouts (deadlines checked by the server's sweep, ± its interval): idle (no request bytes,
 *   nothing unanswered) `idleTimeoutMs` → closed silently; a request's head + body not received
 *   within `requestTimeoutMs` of its first byte → 408 (through the application), then closed; if
 *   even that answer does not go out within another `requestTimeoutMs`, the socket is cut.
 * - Stalled streams: while a streamed answer is being written or waits (parked) behind earlier
 *   answers, and the socket holds bytes the client has not taken, the connection is destroyed once no
 *   write made progress for `streamStallMs` (`gateway.stream_stall_timeout`, 30 s; checked by the
 *   sweep). Progress: a piece of the stream written to the socket, the socket draining, or a write to a
 *   socket with nothing queued (the wait starts then). Destroying the connection destroys the stream's
 *   source, which closes its origin connection (mid-answer, never reused), so the origin pool can open
 *   a new one. A client that reads slower than one piece (≤ 64 KiB) per `streamStallMs` counts as
 *   stalled. An origin that is slow is not the client's stall: nothing is queued then.
 * - The client leaving (socket closed before an answer was written) marks every unanswered exchange
 *   gone (aborting its signal, if one was made) and destroys a streaming answer's source.
 */
import type { Socket } from 'node:net';
import type { BufferPool } from '../buffer-pool.js';
import { asksClose, CHUNKED, CLOSE_DELIMITED, CONTINUE, NO_BODY, responseHead } from './answer-head.js';
import { type ParserSink, type RequestHead, RequestParser } from './request-parser.js';
import { RequestRefusal } from './request-refusal.js';
import { type ExchangeOwner, type ServerAnswer, ServerExchange } from './server-exchange.js';
import { StreamPump } from './stream-pump.js';

/** What a wire server does with requests. */
export interface Http1App {
  /** A request's head arrived: answer `exchange` once (send or stream). */
  request(exchange: ServerExchange): void;
  /** A request was refused at the HTTP level before it reached `request`: answer with the error. */
  refused(exchange: ServerExchange, error: RequestRefusal): void;
  /** An answer was handed to the socket in full (not called for answers cut short). */
  answered?(exchange: ServerExchange): void;
  /** A connection was destroyed because its client took no bytes of a streamed answer for streamStallMs. */
  streamCut?(): void;
}

/** Settings and counters shared by a server's connections. */
export interface ServerContext {
  readonly app: Http1App;
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** A streamed answer whose client takes nothing for this long is cut (ms). */
  readonly streamStallMs: number;
  readonly pipelineDepth: number;
  /** Where streamed answers' pieces are released once written. */
  readonly buffers: BufferPool;
  /** A coarse clock (ms, performance.now()), advanced by the server's sweep. */
  now: number;
  /** Exchanges handed to the application and not yet answered in full, on every connection. */
  inFlight: number;
  forget(connection: ServerConnection): void;
}

/** Bodies up to this size go out in the same buffer as the head (one copy, one write). */
const COALESCE_BYTES = 16 * 1024;
const NO_DEADLINE = 0;
const IDLE = 1;
const REQUEST = 2;

export class ServerConnection implements ParserSink, ExchangeOwner {
  readonly #socket: Socket;
  readonly #ctx: ServerContext;
  readonly #parser: RequestParser;
  readonly #remote: string | undefined;
  /** Exchanges not yet answered in full, in request order. */
  readonly #queue: ServerExchange[] = [];
  /** The exchange whose body is being read. */
  #current: ServerExchange | undefined;
  /** `#current`, when the application has not been given it yet. */
  #undispatched: ServerExchange | undefined;
  #pump: StreamPump | undefined;
  /** Bytes read but not parsed yet (reading paused after a request). */
  #stash: Buffer | undefined;
  #parsing = false;
  #readPaused = false;
  #pipelineFull = false;
  #writeFull = false;
  /** Body bytes of unanswered requests. */
  #buffered = 0;
  /** No new requests: the connection ends after the last answer. */
  #closing = false;
  #dead = false;
  #deadline: number;
  #deadlineKind = IDLE;
  #timedOut = false;
  /** Answers with a stream (`rest`) parked or being written: the stall cut applies while > 0. */
  #streams = 0;
  /** ctx.now at the last write progress (see the header), while #streams > 0. */
  #progressAt = 0;

  constructor(socket: Socket, ctx: ServerContext) {
    this.#socket = socket;
    this.#ctx = ctx;
    this.#remote = socket.remoteAddress;
    this.#parser = new RequestParser(this, ctx.maxBodyBytes);
    this.#deadline = ctx.now + ctx.idleTimeoutMs;
    socket.on('data', (chunk: Buffer) => this.#data(chunk));
    socket.on('drain', () => this.#drained());
    socket.on('end', () => this.#ended());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#closed());
  }

  /** Called by the server's sweep: acts on an expired deadline, or a stalled stream. */
  tick(now: number): void {
    if (
      this.#streams > 0 &&
      now - this.#progressAt >= this.#ctx.streamStallMs &&
      this.#socket.writableLength > 0 &&
      !this.#dead
    ) {
      this.#socket.destroy();
      this.#ctx.app.streamCut?.();
      return;
    }
    if (this.#deadlineKind === NO_DEADLINE || now < this.#deadline || this.#dead) return;
    // Idle, a second expiry, or a request already refused (its answer did not go out in time): cut.
    if (this.#deadlineKind === IDLE || this.#timedOut || this.#parser.stopped) {
      this.#socket.destroy();
      return;
    }
    this.#timedOut = true;
    this.#deadline = now + this.#ctx.requestTimeoutMs;
    this.#parser.stop();
    this.fail(new RequestRefusal('timeout', `The request was not received within ${this.#ctx.requestTimeoutMs} ms.`));
  }

  /** Server shutdown: no new requests; closes now if nothing is unanswered, else after the last answer. */
  shutdown(): void {
    this.#closing = true;
    if (this.#queue.length === 0) {
      this.#socket.destroy();
      return;
    }
    if (!this.#parser.inBody) this.#parser.stop();
  }

  destroy(): void {
    this.#socket.destroy();
  }

  // ── ParserSink ──────────────────────────────────────────────────────────────────────────────

  requestStarted(): void {
    this.#deadline = this.#ctx.now + this.#ctx.requestTimeoutMs;
    this.#deadlineKind = REQUEST;
  }

  head(head: RequestHead): void {
    if (this.#closing) {
      this.#parser.stop();
      if (this.#queue.length === 0) this.#socket.destroy();
      return;
    }
    const exchange = new ServerExchange(this, head, this.#remote);
    this.#queue.push(exchange);
    this.#ctx.inFlight += 1;
    this.#current = exchange;
    this.#undispatched = exchange;
  }

  body(piece: Buffer): void {
    const exchange = this.#current as ServerExchange;
    if (!exchange.finished) exchange.pushBody(piece);
  }

  complete(): boolean {
    const exchange = this.#current as ServerExchange;
    this.#current = undefined;
    exchange.completeBody();
    if (!exchange.finished) this.#buffered += exchange.bufferedBytes;
    else exchange.bufferedBytes = 0;
    if (exchange.closeAfter || this.#closing) this.#parser.stop();
    if (this.#queue.length > 0) this.#deadlineKind = NO_DEADLINE;
    else this.#idle();
    if (this.#undispatched === exchange) {
      this.#undispatched = undefined;
      this.#dispatch(exchange);
    }
    if (this.#queue.length >= this.#ctx.pipelineDepth || this.#buffered >= this.#ctx.maxBodyBytes) {
      this.#pipelineFull = true;
    }
    return this.#pipelineFull || this.#writeFull;
  }

  /** A parse error or a request timeout: the request fails, its answer closes the connection. */
  fail(error: RequestRefusal): void {
    const exchange = this.#current;
    this.#current = undefined;
    const shuttingDown = this.#closing;
    this.#closing = true;
    if (exchange === undefined) {
      if (shuttingDown && this.#queue.length === 0) {
        this.#socket.destroy();
        return;
      }
      // Nothing reached the application yet: a stand-in exchange carries the refusal, in order.
      const stand = new ServerExchange(this, undefined, this.#remote);
      this.#queue.push(stand);
      this.#ctx.inFlight += 1;
      this.#ctx.app.refused(stand, error);
      return;
    }
    exchange.closeAfter = true;
    exchange.failBody(error);
    if (this.#undispatched === exchange) {
      this.#undispatched = undefined;
      this.#dispatch(exchange);
    } else if (exchange.finished && this.#queue.length === 0) {
      // Already answered (before its body); the connection cannot be read on.
      this.#socket.destroySoon();
    }
  }

  // ── ExchangeOwner ───────────────────────────────────────────────────────────────────────────

  answer(exchange: ServerExchange, answer: ServerAnswer): void {
    if (exchange.answered || this.#dead || exchange.gone) {
      answer.rest?.destroy();
      return;
    }
    exchange.answered = true;
    exchange.status = answer.status;
    if (answer.rest !== undefined && this.#streams++ === 0) this.#progressAt = this.#ctx.now;
    if (this.#queue[0] !== exchange || this.#pump !== undefined) {
      exchange.parked = answer;
      return;
    }
    this.#write(exchange, answer);
  }

  continueWanted(exchange: ServerExchange): void {
    if (exchange.continued) return;
    if (this.#queue[0] === exchange && this.#pump === undefined) {
      exchange.continued = true;
      this.#socket.write(CONTINUE);
    } else {
      exchange.continuePending = true;
    }
  }

  // ── Internals ───────────────────────────────────────────────────────────────────────────────

  #data(chunk: Buffer): void {
    if (this.#dead) return;
    if (this.#stash !== undefined) {
      chunk = Buffer.concat([this.#stash, chunk]);
      this.#stash = undefined;
    }
    this.#feed(chunk);
  }

  #feed(chunk: Buffer): void {
    this.#parsing = true;
    const used = this.#parser.execute(chunk);
    this.#parsing = false;
    if (used < chunk.length && !this.#parser.stopped) this.#stash = chunk.subarray(used);
    const waiting = this.#undispatched;
    if (waiting !== undefined) {
      // The head came, its body is still on the way: the application may refuse it (or ask for
      // 100 Continue) before the body is read.
      this.#undispatched = undefined;
      this.#dispatch(waiting);
    }
    if ((this.#pipelineFull || this.#writeFull) && !this.#readPaused && !this.#dead) {
      this.#readPaused = true;
      this.#socket.pause();
    }
  }

  #dispatch(exchange: ServerExchange): void {
    try {
      this.#ctx.app.request(exchange);
    } catch {
      this.#socket.destroy();
    }
  }

  #write(exchange: ServerExchange, answer: ServerAnswer): void {
    const { status, headers, body, rest, length } = answer;
    const socket = this.#socket;
    let close =
      exchange.closeAfter ||
      asksClose(headers) ||
      (this.#closing && this.#queue.length === 1) ||
      // It was answered without its body, and the client may be holding the body back for a 100.
      (exchange.expectContinue && !exchange.continued && !exchange.bodySettled);
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
      this.#finished(exchange, close);
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
      this.#finished(exchange, close);
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
    this.#pump = new StreamPump(
      socket,
      rest,
      framing,
      first.length,
      (ok) => {
        this.#pump = undefined;
        this.#streams -= 1;
        if (ok) this.#finished(exchange, close);
        else socket.destroy();
      },
      () => {
        this.#progressAt = this.#ctx.now;
      },
      this.#ctx.buffers,
    );
  }

  /** `exchange` (the first unanswered) was written in full: on to the next, or close. */
  #finished(exchange: ServerExchange, close: boolean): void {
    this.#queue.shift();
    exchange.finished = true;
    this.#ctx.inFlight -= 1;
    this.#buffered -= exchange.bufferedBytes;
    this.#ctx.app.answered?.(exchange);
    if (close || (this.#closing && this.#queue.length === 0)) {
      this.#closing = true;
      this.#parser.stop();
      this.#socket.destroySoon();
      return;
    }
    if (this.#socket.writableNeedDrain) this.#writeFull = true;
    const next = this.#queue[0];
    if (next !== undefined) {
      const parked = next.parked;
      if (parked !== undefined) {
        next.parked = undefined;
        this.#write(next, parked);
        return;
      }
      if (next.continuePending && !next.continued) {
        next.continued = true;
        this.#socket.write(CONTINUE);
      }
    } else if (this.#parser.idle) {
      this.#idle();
    }
    if (this.#pipelineFull && this.#queue.length < this.#ctx.pipelineDepth && this.#buffered < this.#ctx.maxBodyBytes) {
      this.#pipelineFull = false;
      this.#resumeReading();
    }
  }

  #idle(): void {
    this.#deadline = this.#ctx.now + this.#ctx.idleTimeoutMs;
    this.#deadlineKind = IDLE;
  }

  #resumeReading(): void {
    if (this.#dead || this.#parsing || this.#pipelineFull || this.#writeFull) return;
    const stash = this.#stash;
    if (stash !== undefined) {
      this.#stash = undefined;
      this.#feed(stash);
      if (this.#pipelineFull || this.#writeFull) return;
    }
    if (this.#readPaused) {
      this.#readPaused = false;
      this.#socket.resume();
    }
  }

  #drained(): void {
    this.#progressAt = this.#ctx.now;
    this.#pump?.resume();
    if (this.#writeFull) {
      this.#writeFull = false;
      this.#resumeReading();
    }
  }

  /**
   * The client closed its side. With calls still being worked on, it is gone (as nginx and node:http
   * read it): the connection is destroyed, so those calls' signals fire and their origin requests stop
   * instead of holding an origin for an answer nobody reads. Otherwise (nothing in flight, or only a
   * request cut off mid-way, which gets its 400) the answers are finished, then the connection closes.
   */
  #ended(): void {
    if (this.#queue.some((exchange) => !exchange.answered && exchange !== this.#current)) {
      this.#socket.destroy();
      return;
    }
    this.#closing = true;
    const partial = !this.#parser.idle;
    this.#parser.stop();
    if (partial && this.#current !== undefined) {
      const exchange = this.#current;
      this.#current = undefined;
      exchange.closeAfter = true;
      exchange.failBody(
        new RequestRefusal('aborted', 'The client closed the connection before sending the whole body.'),
      );
      if (this.#undispatched === exchange) {
        this.#undispatched = undefined;
        this.#dispatch(exchange);
      }
    }
    if (this.#queue.length === 0) this.#socket.destroySoon();
  }

  #closed(): void {
    this.#dead = true;
    this.#parser.stop();
    this.#pump?.abort();
    this.#pump = undefined;
    for (const exchange of this.#queue) {
      exchange.markGone();
      exchange.parked?.rest?.destroy();
      exchange.parked = undefined;
    }
    this.#current?.markGone();
    this.#streams = 0;
    this.#ctx.inFlight -= this.#queue.length;
    this.#queue.length = 0;
    this.#ctx.forget(this);
  }
}
