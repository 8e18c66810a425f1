/**
 * A strict, incremental HTTP/1.1 request parser; one per connection, fed the socket's chunks as they
 * come (a request may be split at any byte, and several may arrive back to back). It reports to a
 * `ParserSink`: `head`, then `body` pieces (slices of the fed chunks, no copies), then `complete`.
 * This file finds the head's lines and frames the body; request-head.ts turns the lines into a head.
 *
 * Accepted: `METHOD SP request-target SP HTTP/1.0|HTTP/1.1 CRLF`, header lines `name: value CRLF`
 * (names lowercased, values decoded as latin1 and trimmed of spaces/tabs), an empty line; empty lines
 * before a request line are skipped (RFC 9112 §2.2). Bodies: `Content-Length`, or
 * `Transfer-Encoding: chunked` (chunk extensions ignored, trailer lines read and dropped), else none.
 *
 * Refused, because a proxy in front could frame the message differently (request smuggling), each
 * as a `RequestRefusal` after which the parser reads nothing more:
 *   - 'malformed' (400): a bare LF or CR anywhere in the head or chunk framing (CRLF is required), an
 *     obs-fold line, a space or other non-token byte in a header name (so no space before the colon),
 *     control bytes in values, a request-target with bytes outside 0x21–0x7E, a version other than
 *     HTTP/1.0 or 1.1, a Content-Length that is not 1–15 digits or differs between duplicates,
 *     Content-Length together with Transfer-Encoding, Transfer-Encoding in HTTP/1.0 or with `chunked`
 *     not last, an HTTP/1.1 request without Host or any request with two Host lines, a bad chunk size
 *     line, chunk data not followed by CRLF, a chunk-size line over 1 KiB, trailers over 16 KiB.
 *   - 'unsupported-encoding' (501): a Transfer-Encoding list other than `chunked` alone (gzip, chunked).
 *   - 'head-too-large' (431): a head over 16 KiB or with more than 100 header lines.
 *   - 'body-too-large' (413): a declared Content-Length over `maxBodyBytes` (reported right after
 *     `head`, before any body byte is read), or chunked data growing past it (before the chunk's data).
 */

import { CR, HEX, HTAB, isTextChar, LF, SP, TCHAR } from '../bytes.js';
import { parseRequestHead, type RequestHead } from './request-head.js';
import { RequestRefusal } from './request-refusal.js';

export type { RequestHead } from './request-head.js';

export const HEAD_MAX_BYTES = 16 * 1024;
export const HEAD_MAX_LINES = 100;
const CHUNK_LINE_MAX = 1024;
const TRAILERS_MAX_BYTES = HEAD_MAX_BYTES;
/** 8 hex digits: 4 GiB, beyond any body limit. */
const CHUNK_SIZE_MAX_DIGITS = 8;

export interface ParserSink {
  /** The first byte of a request arrived (starts its timer). */
  requestStarted(): void;
  head(head: RequestHead): void;
  body(piece: Buffer): void;
  /** The request's body ended. Return true to stop `execute` right after it (it returns the offset). */
  complete(): boolean;
  fail(error: RequestRefusal): void;
}

// Parser states.
const HEAD = 0;
const BODY = 1;
const CHUNK_SIZE = 2;
const CHUNK_BWS = 3;
const CHUNK_EXT = 4;
const CHUNK_SIZE_LF = 5;
const CHUNK_DATA = 6;
const CHUNK_DATA_CR = 7;
const CHUNK_DATA_LF = 8;
const TRAILER_START = 9;
const TRAILER_NAME = 10;
const TRAILER_VALUE = 11;
const TRAILER_LF = 12;
const TRAILER_END_LF = 13;
const DEAD = 14;

const COLON = 58;
const SEMICOLON = 59;

export class RequestParser {
  readonly #sink: ParserSink;
  readonly #maxBodyBytes: number;
  #state = HEAD;
  /** No byte of the next request seen yet. */
  #fresh = true;
  #pause = false;
  // Head scanning, offsets relative to the head's first byte.
  /** A head split over chunks is gathered here (at most HEAD_MAX_BYTES + 1 bytes). */
  #scratch: Buffer | undefined;
  #scratchLength = 0;
  #scanned = 0;
  #lineStart = 0;
  #requestLine = false;
  /** [start, end) of each non-empty line, CRLF excluded; reused from request to request. */
  readonly #spans: number[] = [];
  // Body framing.
  #remaining = 0;
  #bodyBytes = 0;
  #chunkDigits = 0;
  #lineBytes = 0;
  #trailerBytes = 0;

  constructor(sink: ParserSink, maxBodyBytes: number) {
    this.#sink = sink;
    this.#maxBodyBytes = maxBodyBytes;
  }

  /** Between requests, with no byte of the next one received. */
  get idle(): boolean {
    return this.#state === HEAD && this.#fresh;
  }

  /** Reading a request's body (its head was reported). */
  get inBody(): boolean {
    return this.#state !== HEAD && this.#state !== DEAD;
  }

  get stopped(): boolean {
    return this.#state === DEAD;
  }

  /** Reads nothing more (a closing connection, or after an error). */
  stop(): void {
    this.#state = DEAD;
    this.#scratch = undefined;
  }

  /**
   * Parses `chunk`; returns how many bytes were used: all of them, unless the sink asked to pause
   * after a request (then the caller feeds the rest later).
   */
  execute(chunk: Buffer): number {
    const length = chunk.length;
    let pos = 0;
    while (pos < length) {
      switch (this.#state) {
        case HEAD:
          if (this.#fresh) {
            this.#fresh = false;
            this.#sink.requestStarted();
          }
          pos = this.#headStep(chunk, pos);
          if (pos < 0) return length;
          break;
        case BODY: {
          const take = Math.min(this.#remaining, length - pos);
          this.#sink.body(take === length ? chunk : chunk.subarray(pos, pos + take));
          pos += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#complete();
          break;
        }
        case CHUNK_DATA: {
          const take = Math.min(this.#remaining, length - pos);
          this.#sink.body(chunk.subarray(pos, pos + take));
          pos += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = CHUNK_DATA_CR;
          break;
        }
        case DEAD:
          return length;
        default:
          this.#framingByte(chunk[pos] as number);
          pos += 1;
      }
      if (this.#pause) {
        this.#pause = false;
        return pos;
      }
    }
    return length;
  }

  /** Stops parsing and reports `kind`; returns false so callers can `return this.#fail(…)`. */
  #fail(kind: RequestRefusal['kind'], message: string): false {
    this.stop();
    this.#sink.fail(new RequestRefusal(kind, message, kind === 'body-too-large' ? this.#maxBodyBytes : undefined));
    return false;
  }

  #complete(): void {
    this.#state = HEAD;
    this.#fresh = true;
    this.#pause = this.#sink.complete();
  }

  /** Returns the offset after the head, or -1 when more bytes are needed or parsing stopped. */
  #headStep(chunk: Buffer, pos: number): number {
    const length = chunk.length;
    if (this.#scratchLength === 0) {
      const end = this.#scanHead(chunk, pos, length);
      if (end === -1) {
        if (this.#state === DEAD) return -1;
        this.#scratch = Buffer.allocUnsafe(HEAD_MAX_BYTES + 1);
        chunk.copy(this.#scratch, 0, pos, length);
        this.#scratchLength = length - pos;
        return -1;
      }
      this.#parseHead(chunk, pos);
      return pos + end;
    }
    const scratch = this.#scratch as Buffer;
    const before = this.#scratchLength;
    const take = Math.min(HEAD_MAX_BYTES + 1 - before, length - pos);
    chunk.copy(scratch, before, pos, pos + take);
    this.#scratchLength += take;
    const end = this.#scanHead(scratch, 0, this.#scratchLength);
    if (end === -1) return -1;
    this.#scratchLength = 0;
    this.#scratch = undefined;
    this.#parseHead(scratch, 0);
    return pos + (end - before);
  }

  /**
   * Finds the head's end (the offset after its empty line, relative to `base`), checking line endings
   * and limits on the way and remembering each line's span; -1 when more bytes are needed (or it failed).
   */
  #scanHead(buf: Buffer, base: number, end: number): number {
    let scan = base + this.#scanned;
    const spans = this.#spans;
    for (;;) {
      const lf = buf.indexOf(LF, scan);
      if (lf === -1 || lf >= end) {
        this.#scanned = end - base;
        if (end - base > HEAD_MAX_BYTES) this.#fail('head-too-large', 'The request head is larger than 16 KiB.');
        return -1;
      }
      const at = lf - base;
      if (at + 1 > HEAD_MAX_BYTES) {
        this.#fail('head-too-large', 'The request head is larger than 16 KiB.');
        return -1;
      }
      const lineStart = this.#lineStart;
      if (at === lineStart || buf[lf - 1] !== CR) {
        this.#fail('malformed', 'A line of the request head ends in a bare LF; lines must end in CRLF.');
        return -1;
      }
      if (at - 1 === lineStart) {
        if (this.#requestLine) return at + 1;
        // An empty line before the request line is skipped.
      } else {
        if (this.#requestLine && spans.length / 2 > HEAD_MAX_LINES) {
          this.#fail('head-too-large', `The request has more than ${HEAD_MAX_LINES} header lines.`);
          return -1;
        }
        this.#requestLine = true;
        spans.push(lineStart, at - 1);
      }
      this.#lineStart = at + 1;
      scan = lf + 1;
    }
  }

  /** Parses the scanned head and reports it; false when it was refused. */
  #parseHead(buf: Buffer, base: number): boolean {
    this.#scanned = 0;
    this.#lineStart = 0;
    this.#requestLine = false;
    const head = parseRequestHead(buf, base, this.#spans);
    this.#spans.length = 0;
    if ('refused' in head) return this.#fail(head.refused, head.message);
    this.#sink.head(head);
    if (this.#state === DEAD) return false;
    this.#bodyBytes = 0;
    const declared = head.contentLength;
    if (declared === -1) {
      this.#startChunk();
    } else if (declared > this.#maxBodyBytes) {
      this.#fail('body-too-large', `The declared body is larger than ${this.#maxBodyBytes} bytes.`);
    } else if (declared > 0) {
      this.#state = BODY;
      this.#remaining = declared;
    } else {
      this.#complete();
    }
    return true;
  }

  #startChunk(): void {
    this.#state = CHUNK_SIZE;
    this.#remaining = 0;
    this.#chunkDigits = 0;
    this.#lineBytes = 0;
  }

  /** One byte of chunked framing (size lines, CRLF after data, trailers). */
  #framingByte(c: number): void {
    switch (this.#state) {
      case CHUNK_SIZE: {
        this.#lineBytes += 1;
        const digit = HEX[c] as number;
        if (digit >= 0) {
          if (this.#chunkDigits === CHUNK_SIZE_MAX_DIGITS) {
            this.#fail('malformed', 'A chunk size is too long.');
            return;
          }
          this.#chunkDigits += 1;
          this.#remaining = this.#remaining * 16 + digit;
          return;
        }
        if (this.#chunkDigits === 0) {
          this.#fail('malformed', 'A chunk size line does not start with hex digits.');
          return;
        }
        if (c === CR) this.#state = CHUNK_SIZE_LF;
        else if (c === SEMICOLON) this.#state = CHUNK_EXT;
        else if (c === SP || c === HTAB) this.#state = CHUNK_BWS;
        else this.#fail('malformed', 'A chunk size line is malformed.');
        return;
      }
      case CHUNK_BWS:
        this.#lineBytes += 1;
        if (c === SEMICOLON) this.#state = CHUNK_EXT;
        else if (c !== SP && c !== HTAB) this.#fail('malformed', 'A chunk size line is malformed.');
        else if (this.#lineBytes > CHUNK_LINE_MAX) this.#fail('malformed', 'A chunk size line is longer than 1 KiB.');
        return;
      case CHUNK_EXT:
        this.#lineBytes += 1;
        if (c === CR) this.#state = CHUNK_SIZE_LF;
        else if (!isTextChar(c)) this.#fail('malformed', 'A chunk extension has a control byte.');
        else if (this.#lineBytes > CHUNK_LINE_MAX) this.#fail('malformed', 'A chunk size line is longer than 1 KiB.');
        return;
      case CHUNK_SIZE_LF:
        this.#sizeLineEnd(c);
        return;
      case CHUNK_DATA_CR:
        if (c === CR) this.#state = CHUNK_DATA_LF;
        else this.#fail('malformed', 'Chunk data must be followed by CRLF.');
        return;
      case CHUNK_DATA_LF:
        if (c === LF) this.#startChunk();
        else this.#fail('malformed', 'Chunk data must be followed by CRLF.');
        return;
    }
    this.#trailerByte(c);
  }

  /** The LF ending a chunk size line: the chunk's data next, or the trailers after the last chunk. */
  #sizeLineEnd(c: number): void {
    if (c !== LF) {
      this.#fail('malformed', 'A chunk size line must end in CRLF.');
      return;
    }
    if (this.#remaining === 0) {
      this.#state = TRAILER_START;
      this.#trailerBytes = 0;
      return;
    }
    this.#bodyBytes += this.#remaining;
    if (this.#bodyBytes > this.#maxBodyBytes) {
      this.#fail('body-too-large', `The chunked body is larger than ${this.#maxBodyBytes} bytes.`);
      return;
    }
    this.#state = CHUNK_DATA;
  }

  /** One byte of the trailers: `name: value` lines, checked for framing, then dropped. */
  #trailerByte(c: number): void {
    this.#trailerBytes += 1;
    if (this.#trailerBytes > TRAILERS_MAX_BYTES) {
      this.#fail('malformed', 'The trailers are larger than 16 KiB.');
      return;
    }
    switch (this.#state) {
      case TRAILER_START:
        if (c === CR) this.#state = TRAILER_END_LF;
        else if (TCHAR[c] === 1) this.#state = TRAILER_NAME;
        else this.#fail('malformed', 'A trailer line is malformed.');
        return;
      case TRAILER_NAME:
        if (c === COLON) this.#state = TRAILER_VALUE;
        else if (TCHAR[c] !== 1) this.#fail('malformed', 'A trailer name has an invalid character.');
        return;
      case TRAILER_VALUE:
        if (c === CR) this.#state = TRAILER_LF;
        else if (!isTextChar(c)) this.#fail('malformed', 'A trailer value has a control byte.');
        return;
      case TRAILER_LF:
        if (c === LF) this.#state = TRAILER_START;
        else this.#fail('malformed', 'A trailer line must end in CRLF.');
        return;
      case TRAILER_END_LF:
        if (c === LF) this.#complete();
        else this.#fail('malformed', 'The trailers must end in CRLF.');
        return;
    }
  }
}

/** 1–15 ASCII digits → the number; anything else → -1. */
