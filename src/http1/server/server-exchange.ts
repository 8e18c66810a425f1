/**
 * One request and its answer on a server connection. The application gets it as soon as the request's
 * head is parsed (so it can refuse a request before its body is read), reads the body with `readBody`,
 * and answers once with `send` or `stream`. Answers leave in request order: the connection holds an
 * answer back (parks it) until every earlier request on the connection was answered.
 *
 * `ServerExchange` is what the application sees; `ExchangeSlot` is the class behind it, which also
 * keeps the connection's bookkeeping for the request in private fields (parked answer, body bytes held,
 * 100-continue, close-after) and offers the connection the methods below "Used by the connection".
 * State per request is kept small: the body pieces, one pending body promise when the application
 * waits for the body, and a GoneSignal only when `signal()` is called (a cache hit never asks).
 */

import type { Readable } from 'node:stream';
import type { HeaderList } from './answer-head.js';
import { GoneSignal } from './gone-signal.js';
import type { RequestHead } from './request-parser.js';
import { RequestRefusal } from './request-refusal.js';

/** A request as the application sees it, and the one way to answer it. */
export interface ServerExchange {
  readonly method: string;
  /** The request-target as sent (path and query). */
  readonly target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minor: number;
  readonly remoteAddress: string | undefined;
  /** performance.now() when the head was parsed. */
  readonly startedAt: number;
  /** Milliseconds since the head was parsed (the server measures its exchanges' time itself). */
  elapsedMs(): number;
  /** The application's label for this request (e.g. the network, for metrics); '' until it sets one. */
  tag: string;
  /** The application's own state for this request (e.g. its request id); undefined until it sets one. */
  data: unknown;
  /** The answer's status, once answered (0 before). */
  readonly status: number;
  /** Body bytes of the answer written to the socket (known once answered in full; 0 for HEAD). */
  readonly bytesOut: number;
  /** `send` or `stream` was called (and taken: not after the client left). */
  readonly answered: boolean;
  /** The client closed the connection before this answer was sent in full. */
  readonly gone: boolean;
  /** The first value of header `name` (lowercase), if sent. */
  header(name: string): string | undefined;
  /** Every value of header `name` (lowercase), one per field line, in arrival order. */
  headerLines(name: string): string[];
  bodyIfComplete(): Buffer | undefined;
  readBody(): Promise<Buffer>;
  signal(): GoneSignal;
  /** Answers with a whole body (none for 204); `headers` is a flat name, value, … list. */
  send(status: number, headers: HeaderList, body?: Buffer): void;
  /**
   * Answers with `head` now and `rest` as it arrives, with backpressure. `length` (of head + rest)
   * becomes content-length; without it the body is chunked (close-delimited for HTTP/1.0). If `rest`
   * fails, or ends short of `length`, the connection is cut; if the client leaves, `rest` is destroyed.
   */
  stream(status: number, headers: HeaderList, head: Buffer, rest: Readable, length?: number): void;
}

/** An answer for the connection to write: now, or (parked) once every earlier request was answered. */
export interface ServerAnswer {
  readonly status: number;
  readonly headers: HeaderList;
  readonly body: Buffer | undefined;
  readonly rest: Readable | undefined;
  readonly length: number | undefined;
}

/** What an exchange asks of its connection. */
export interface ExchangeOwner {
  /** The application answered (once, before the client left): write it now or park it. */
  answer(exchange: ExchangeSlot, answer: ServerAnswer): void;
  /** The application waits for the body of a request that sent `Expect: 100-continue`. */
  continueWanted(exchange: ExchangeSlot): void;
}

const EMPTY = Buffer.alloc(0);
const BODY_PENDING = 0;
const BODY_DONE = 1;
const BODY_FAILED = 2;

/** The head of a stand-in exchange, made to carry the refusal of a request whose head did not parse. */
const UNPARSED: RequestHead = {
  method: '',
  target: '',
  minor: 1,
  headers: [],
  keepAlive: false,
  expectContinue: false,
  contentLength: 0,
};

export class ExchangeSlot implements ServerExchange {
  /** The parsed request head (request-head.ts says what each field holds). */
  readonly head: RequestHead;
  readonly remoteAddress: string | undefined;
  readonly startedAt: number;
  tag = '';
  data: unknown;
  #status = 0;
  #bytesOut = 0;
  #answered = false;
  /** The connection closes after this answer. */
  #closeAfter: boolean;
  /** `100 Continue` was sent, or is not needed any more (body bytes arrived). */
  #continued = false;
  /** The application waits for the body, and `100 Continue` goes out when this answer is next. */
  #continuePending = false;
  /** Body bytes held for this request until it is answered (the connection's pipelining bound). */
  #buffered = 0;
  /** The answer, when it came before earlier requests' answers were sent. */
  #parked: ServerAnswer | undefined;
  /** The answer was handed to the socket in full. */
  #finished = false;
  readonly #owner: ExchangeOwner;
  #piece: Buffer | undefined;
  #pieces: Buffer[] | undefined;
  #size = 0;
  #bodyState = BODY_PENDING;
  #bodyError: RequestRefusal | undefined;
  #resolve: ((body: Buffer) => void) | undefined;
  #reject: ((err: RequestRefusal) => void) | undefined;
  #gone = false;
  #abort: GoneSignal | undefined;

  constructor(owner: ExchangeOwner, head: RequestHead | undefined, remoteAddress: string | undefined) {
    this.#owner = owner;
    this.head = head ?? UNPARSED;
    this.#closeAfter = !this.head.keepAlive;
    this.remoteAddress = remoteAddress;
    this.startedAt = performance.now();
    if (head !== undefined && head.contentLength === 0) this.#bodyState = BODY_DONE;
  }

  get method(): string {
    return this.head.method;
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  get target(): string {
    return this.head.target;
  }

  get minor(): number {
    return this.head.minor;
  }

  get status(): number {
    return this.#status;
  }

  get answered(): boolean {
    return this.#answered;
  }

  get bytesOut(): number {
    return this.#bytesOut;
  }

  header(name: string): string | undefined {
    const headers = this.head.headers;
    for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
    return undefined;
  }

  headerLines(name: string): string[] {
    const headers = this.head.headers;
    const lines: string[] = [];
    for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) lines.push(headers[i + 1] as string);
    return lines;
  }

  /** The whole body if it has fully arrived (the usual case for small requests), else undefined. */
  bodyIfComplete(): Buffer | undefined {
    return this.#bodyState === BODY_DONE ? this.#body() : undefined;
  }

  /** The whole body; rejects with a RequestRefusal (too large, malformed framing, timeout, client gone). */
  readBody(): Promise<Buffer> {
    if (this.#bodyState === BODY_DONE) return Promise.resolve(this.#body());
    if (this.#bodyState === BODY_FAILED) return Promise.reject(this.#bodyError);
    if (this.#resolve !== undefined) return Promise.reject(new Error('readBody was already called'));
    if (this.head.expectContinue && !this.#continued && this.#size === 0) this.#owner.continueWanted(this);
    return new Promise<Buffer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get gone(): boolean {
    return this.#gone;
  }

  /** Aborted when the client goes away before the answer is sent; made on first use. */
  signal(): GoneSignal {
    if (this.#abort === undefined) {
      this.#abort = new GoneSignal();
      if (this.#gone) this.#abort.abort();
    }
    return this.#abort;
  }

  send(status: number, headers: HeaderList, body?: Buffer): void {
    this.#answer({ status, headers, body, rest: undefined, length: undefined });
  }

  stream(status: number, headers: HeaderList, head: Buffer, rest: Readable, length?: number): void {
    this.#answer({ status, headers, body: head, rest, length });
  }

  // ── Used by the connection ──────────────────────────────────────────────────────────────────

  /** The answer was handed to the socket in full. */
  get finished(): boolean {
    return this.#finished;
  }

  /** The connection closes after this answer. */
  get closeAfter(): boolean {
    return this.#closeAfter;
  }

  /** The connection is to close after this answer (a refusal, or the client closed its side). */
  closeAfterAnswer(): void {
    this.#closeAfter = true;
  }

  /**
   * Answered without its body while the client may still hold the body back for a `100 Continue`
   * that was never sent: the connection cannot be read on after this answer.
   */
  get mayHoldBody(): boolean {
    return this.head.expectContinue && !this.#continued && this.#bodyState === BODY_PENDING;
  }

  /** True (once) when `100 Continue` is to be written now: not sent yet and still useful. */
  continueNow(): boolean {
    if (this.#continued) return false;
    this.#continued = true;
    return true;
  }

  /** `100 Continue` is to go out once this request is the first unanswered one. */
  deferContinue(): void {
    this.#continuePending = true;
  }

  /** True (once) when a deferred `100 Continue` is to be written now. */
  continueIfPending(): boolean {
    return this.#continuePending && this.continueNow();
  }

  /** Keeps an answer that came before earlier requests' answers were written. */
  park(answer: ServerAnswer): void {
    this.#parked = answer;
  }

  /** The parked answer, if any (taken: it is written now). */
  takeParked(): ServerAnswer | undefined {
    const parked = this.#parked;
    this.#parked = undefined;
    return parked;
  }

  /**
   * The answer was handed to the socket in full, `bytesOut` of body with it; returns the request body
   * bytes it no longer holds.
   */
  finish(bytesOut: number): number {
    this.#finished = true;
    this.#bytesOut = bytesOut;
    return this.#buffered;
  }

  pushBody(piece: Buffer): void {
    this.#continued = true;
    if (this.#bodyState !== BODY_PENDING) return;
    this.#size += piece.length;
    if (this.#piece === undefined) {
      this.#piece = piece;
      return;
    }
    this.#pieces ??= [this.#piece];
    this.#pieces.push(piece);
  }

  /** The body arrived in full; returns the bytes it holds until answered (0 once answered). */
  completeBody(): number {
    if (this.#bodyState !== BODY_PENDING) return 0;
    this.#bodyState = BODY_DONE;
    this.#buffered = this.#finished ? 0 : this.#size;
    if (this.#resolve !== undefined) this.#resolve(this.#body());
    this.#resolve = undefined;
    this.#reject = undefined;
    return this.#buffered;
  }

  failBody(error: RequestRefusal): void {
    if (this.#bodyState !== BODY_PENDING) return;
    this.#bodyState = BODY_FAILED;
    this.#bodyError = error;
    this.#piece = undefined;
    this.#pieces = undefined;
    if (this.#reject !== undefined) this.#reject(error);
    this.#resolve = undefined;
    this.#reject = undefined;
  }

  /** The connection closed before the answer was sent in full: a parked streamed answer's source is destroyed. */
  markGone(): void {
    this.takeParked()?.rest?.destroy();
    if (this.#gone) return;
    this.#gone = true;
    this.failBody(new RequestRefusal('aborted', 'The client closed the connection before sending the whole body.'));
    this.#abort?.abort();
  }

  /** Taken once, and never after the client left; the status is set before the connection writes it. */
  #answer(answer: ServerAnswer): void {
    if (this.#answered || this.#gone) {
      answer.rest?.destroy();
      return;
    }
    this.#answered = true;
    this.#status = answer.status;
    this.#owner.answer(this, answer);
  }

  #body(): Buffer {
    if (this.#pieces !== undefined) {
      const whole = Buffer.concat(this.#pieces, this.#size);
      this.#pieces = undefined;
      this.#piece = whole;
      return whole;
    }
    return this.#piece ?? EMPTY;
  }
}
