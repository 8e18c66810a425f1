/**
 * One client connection (TCP or TLS): feeds the parser, hands each request to the application as an
 * exchange as soon as its head is parsed (with its body when the body came in the same read), and
 * has its answers written strictly in request order (answer-writer.ts: coalescing, parking, streams).
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
 * - Stalled streams: a connection whose streamed answer made no write progress for `streamStallMs`
 *   (30 s) while the client holds bytes unread is destroyed, and with it the stream's source
 *   (answer-writer.ts says what counts; a slow source is not the client's stall: nothing is queued).
 * - The client leaving (socket closed before an answer was written) marks every unanswered exchange
 *   gone (aborting its signal, if one was made) and destroys a streaming answer's source.
 * - Upgrades (with `Http1App.upgrade`, request-head.ts `asksUpgrade`): nothing is parsed after one; once
 *   earlier answers are out, the socket is let go (listeners off, paused) to `upgrade` (http1-app.ts).
 */
import type { Socket } from 'node:net';
import { AnswerWriter, type WriterOwner } from './answer-writer.js';
import type { ServerContext } from './http1-server.js';
import { asksUpgrade } from './request-head.js';
import { type ParserSink, type RequestHead, RequestParser } from './request-parser.js';
import { RequestRefusal } from './request-refusal.js';
import { type ExchangeOwner, ExchangeSlot, type ServerAnswer, type ServerExchange } from './server-exchange.js';

const NO_DEADLINE = 0;
const IDLE = 1;
const REQUEST = 2;

export class ServerConnection implements ParserSink, ExchangeOwner, WriterOwner {
  readonly #socket: Socket;
  readonly #ctx: ServerContext;
  readonly #parser: RequestParser;
  readonly #writer: AnswerWriter;
  readonly #remote: string | undefined;
  /** Exchanges not yet answered in full, in request order. */
  readonly #queue: ExchangeSlot[] = [];
  /** The exchange whose body is being read; `#undispatched` too while the application has not got it. */
  #current: ExchangeSlot | undefined;
  #undispatched: ExchangeSlot | undefined;
  /** A request to switch protocols waiting for earlier answers (header: Upgrades), the bytes after it. */
  #upgrading: ExchangeSlot | undefined;
  #upgradeRest: Buffer | undefined;
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
  readonly #onData = (chunk: Buffer): void => this.#data(chunk);
  readonly #onDrain = (): void => this.#drained();
  readonly #onEnd = (): void => this.#ended();
  readonly #onError = (): void => this.destroy();
  readonly #onClose = (): void => this.#closed();

  constructor(socket: Socket, ctx: ServerContext) {
    this.#socket = socket;
    this.#ctx = ctx;
    this.#remote = socket.remoteAddress;
    this.#parser = new RequestParser(this, ctx.maxBodyBytes);
    this.#writer = new AnswerWriter(socket, ctx, this);
    this.#deadline = ctx.now + ctx.idleTimeoutMs;
    socket.on('data', this.#onData);
    socket.on('drain', this.#onDrain);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('close', this.#onClose);
  }

  /** Called by the server's sweep: acts on an expired deadline, or a stalled stream. */
  tick(now: number): void {
    if (this.#writer.stalled(now) && !this.#dead) {
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
    const exchange = new ExchangeSlot(this, head, this.#remote);
    if (this.#ctx.app.upgrade !== undefined && asksUpgrade(head, this.#ctx.app.upgradeProtocols)) {
      this.#upgrading = exchange; // complete() follows at once (no body) and stops the parser
      return;
    }
    this.#queue.push(exchange);
    this.#ctx.inFlight += 1;
    this.#current = exchange;
    this.#undispatched = exchange;
  }

  body(piece: Buffer): void {
    const exchange = this.#current as ExchangeSlot;
    if (!exchange.finished) exchange.pushBody(piece);
  }

  complete(): boolean {
    if (this.#upgrading !== undefined) {
      // No request is read after an upgrade; execute returns the offset after its head (#feed).
      this.#parser.stop();
      this.#deadlineKind = NO_DEADLINE;
      return true;
    }
    const exchange = this.#current as ExchangeSlot;
    this.#current = undefined;
    this.#buffered += exchange.completeBody();
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
      const stand = new ExchangeSlot(this, undefined, this.#remote);
      this.#queue.push(stand);
      this.#ctx.inFlight += 1;
      this.#ctx.app.refused(stand, error);
      return;
    }
    exchange.closeAfterAnswer();
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

  answer(exchange: ExchangeSlot, answer: ServerAnswer): void {
    // The exchange takes one answer, never after the client left (then this connection is dead too).
    if (this.#dead) answer.rest?.destroy();
    else this.#writer.answer(exchange, answer);
  }

  continueWanted(exchange: ExchangeSlot): void {
    this.#writer.continueWanted(exchange);
  }

  // ── WriterOwner ─────────────────────────────────────────────────────────────────────────────

  get first(): ExchangeSlot | undefined {
    return this.#queue[0];
  }

  closesAfter(exchange: ExchangeSlot): boolean {
    return (
      exchange.closeAfter ||
      (this.#closing && this.#queue.length === 1) ||
      // It was answered without its body, and the client may be holding the body back for a 100.
      exchange.mayHoldBody
    );
  }

  /** `exchange` (the first unanswered) was written in full: on to the next, or close. */
  written(exchange: ExchangeSlot, close: boolean, bytes: number): void {
    this.#queue.shift();
    this.#buffered -= exchange.finish(bytes);
    this.#ctx.inFlight -= 1;
    this.#ctx.app.answered?.(exchange);
    if (close || (this.#closing && this.#queue.length === 0)) {
      this.#closing = true;
      this.#parser.stop();
      this.#socket.destroySoon();
      return;
    }
    if (this.#upgrading !== undefined && this.#queue.length === 0) {
      this.#handOver();
      return;
    }
    if (this.#socket.writableNeedDrain) this.#writeFull = true;
    if (this.#writer.next()) return;
    if (this.#queue.length === 0 && this.#parser.idle) this.#idle();
    if (this.#pipelineFull && this.#queue.length < this.#ctx.pipelineDepth && this.#buffered < this.#ctx.maxBodyBytes) {
      this.#pipelineFull = false;
      this.#resumeReading();
    }
  }

  // ── Internals ───────────────────────────────────────────────────────────────────────────────

  #data(chunk: Buffer): void {
    if (this.#dead) return;
    if (this.#upgrading !== undefined) {
      // Bytes of the new protocol, read before the socket paused: they lead `rest`.
      this.#upgradeRest = this.#upgradeRest === undefined ? chunk : Buffer.concat([this.#upgradeRest, chunk]);
      return;
    }
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
    if (this.#upgrading !== undefined) {
      this.#upgradeRest = chunk.subarray(used);
      if (this.#queue.length === 0) {
        this.#handOver();
      } else if (!this.#readPaused) {
        this.#readPaused = true;
        this.#socket.pause();
      }
      return;
    }
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

  #idle(): void {
    this.#deadline = this.#ctx.now + this.#ctx.idleTimeoutMs;
    this.#deadlineKind = IDLE;
  }

  #resumeReading(): void {
    if (this.#dead || this.#parsing || this.#pipelineFull || this.#writeFull || this.#upgrading !== undefined) return;
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
    this.#writer.drained();
    if (this.#writeFull) {
      this.#writeFull = false;
      this.#resumeReading();
    }
  }

  /**
   * The client closed its side. With calls still being worked on, it is gone (as nginx and node:http
   * read it): the connection is destroyed, so their signals fire and their work stops. Otherwise (none,
   * or a request cut off mid-way, which gets its 400) the answers are finished, then it closes.
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
      exchange.closeAfterAnswer();
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
    this.#writer.abort();
    for (const exchange of this.#queue) exchange.markGone();
    this.#current?.markGone();
    this.#upgrading = undefined;
    this.#upgradeRest = undefined;
    this.#ctx.inFlight -= this.#queue.length;
    this.#queue.length = 0;
    this.#ctx.forget(this);
  }

  /** Lets go of the socket and gives it to the application's upgrade hook (header: Upgrades). */
  #handOver(): void {
    const exchange = this.#upgrading as ExchangeSlot;
    const rest = this.#upgradeRest ?? Buffer.alloc(0);
    const socket = this.#socket;
    this.#upgrading = undefined;
    this.#upgradeRest = undefined;
    this.#dead = true;
    this.#parser.stop();
    socket.off('data', this.#onData);
    socket.off('drain', this.#onDrain);
    socket.off('end', this.#onEnd);
    socket.off('error', this.#onError);
    socket.off('close', this.#onClose);
    socket.pause();
    this.#ctx.forget(this);
    this.#ctx.upgraded(socket);
    try {
      this.#ctx.app.upgrade?.(exchange, socket, rest);
    } catch {
      socket.destroy();
    }
  }
}
