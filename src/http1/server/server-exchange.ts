/**
 * One request and its answer on a wire connection. The application gets it as soon as the request's
 * head is parsed (so it can refuse a request before its body is read), reads the body with `readBody`,
 * and answers once with `send` or `stream`. Answers leave in request order: the connection holds an
 * answer back until every earlier request on the connection was answered.
 *
 * State per request is kept small: the body pieces, one pending body promise when the application
 * waits for the body, and a GoneSignal signal only when `signal()` is called (a cache hit never asks).
 */

import type { Readable } from 'node:stream';
import type { HeaderList } from './answer-head.js';
import { GoneSignal } from './gone-signal.js';
import type { RequestHead } from './request-parser.js';
import { RequestRefusal } from './request-refusal.js';

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
  answer(exchange: ServerExchange, answer: ServerAnswer): void;
  /** The application waits for the body of a request that sent `Expect: 100-continue`. */
  continueWanted(exchange: ServerExchange): void;
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

export class ServerExchange {
  /** The parsed request head (request-head.ts says what each field holds). */
  readonly head: RequestHead;
  readonly remoteAddress: string | undefined;
  /** performance.now() when the head was parsed. */
  readonly startedAt: number;
  /** The application's label for this request (e.g. the network, for metrics). */
  tag = '';
  /** The answer's status, once answered. */
  status = 0;
  /** `send` or `stream` was called. */
  answered = false;
  /** The connection closes after this answer. */
  closeAfter: boolean;
  /** `100 Continue` was sent, or is not needed any more (body bytes arrived). */
  continued = false;
  /** Body bytes held for this request until it is answered (pipelining bound). */
  bufferedBytes = 0;
  /** The application waits for the body, and `100 Continue` goes out when this answer is next. */
  continuePending = false;
  /** The answer, when it came before earlier requests' answers were sent. */
  parked: ServerAnswer | undefined;
  /** The answer was handed to the socket in full. */
  finished = false;
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
    this.closeAfter = !this.head.keepAlive;
    this.remoteAddress = remoteAddress;
    this.startedAt = performance.now();
    if (head !== undefined && head.contentLength === 0) this.#bodyState = BODY_DONE;
  }

  get method(): string {
    return this.head.method;
  }

  /** The request-target as sent (path and query). */
  get target(): string {
    return this.head.target;
  }

  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  get minor(): number {
    return this.head.minor;
  }

  get expectContinue(): boolean {
    return this.head.expectContinue;
  }

  /** The first value of header `name` (lowercase), if sent. */
  header(name: string): string | undefined {
    const headers = this.head.headers;
    for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
    return undefined;
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
    if (this.expectContinue && !this.continued && this.#size === 0) this.#owner.continueWanted(this);
    return new Promise<Buffer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The client closed the connection before this answer was sent in full. */
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

  /** Answers with a whole body (none for 204); `headers` is a flat name, value, … list. */
  send(status: number, headers: HeaderList, body?: Buffer): void {
    this.#owner.answer(this, { status, headers, body, rest: undefined, length: undefined });
  }

  /**
   * Answers with `head` now and `rest` as it arrives, with backpressure. `length` (of head + rest)
   * becomes content-length; without it the body is chunked (close-delimited for HTTP/1.0). If `rest`
   * fails, or ends short of `length`, the connection is cut; if the client leaves, `rest` is destroyed.
   */
  stream(status: number, headers: HeaderList, head: Buffer, rest: Readable, length?: number): void {
    this.#owner.answer(this, { status, headers, body: head, rest, length });
  }

  // ── Used by the connection ──────────────────────────────────────────────────────────────────

  /** True once the whole body arrived or failed. */
  get bodySettled(): boolean {
    return this.#bodyState !== BODY_PENDING;
  }

  pushBody(piece: Buffer): void {
    this.continued = true;
    if (this.#bodyState !== BODY_PENDING) return;
    this.#size += piece.length;
    if (this.#piece === undefined) {
      this.#piece = piece;
      return;
    }
    this.#pieces ??= [this.#piece];
    this.#pieces.push(piece);
  }

  completeBody(): void {
    if (this.#bodyState !== BODY_PENDING) return;
    this.#bodyState = BODY_DONE;
    this.bufferedBytes = this.#size;
    if (this.#resolve !== undefined) this.#resolve(this.#body());
    this.#resolve = undefined;
    this.#reject = undefined;
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

  /** The connection closed before the answer was sent in full. */
  markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.failBody(new RequestRefusal('aborted', 'The client closed the connection before sending the whole body.'));
    this.#abort?.abort();
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
