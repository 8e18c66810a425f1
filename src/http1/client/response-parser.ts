/**
 * Strict incremental HTTP/1.1 response parser for the origin client. It is fed the socket's bytes as
 * they arrive (split anywhere) and reports each response to its sink: the head (status and announced
 * Content-Length), body bytes (subarrays of the input, never copied: a sink that keeps them past the
 * call copies them if the input buffer is reused), the end. Nothing else of the input is kept.
 * Interim 1xx responses are skipped. Only the headers that frame the message or decide reuse are read
 * (Content-Length, Transfer-Encoding, Connection, Keep-Alive: response-head.ts reads the head's fields),
 * and Location, handed to the sink with the status; the others are validated and dropped.
 *
 * Framing (RFC 9112 §6.3): an answer to a HEAD request (`forHead`, set before each request), 204 and
 * 304 have no body; else `Transfer-Encoding: chunked`; else
 * Content-Length; else the body runs until the origin closes (and the connection is not reused).
 * Reuse: an HTTP/1.1 answer unless it says `Connection: close`; an HTTP/1.0 answer only with
 * `Connection: keep-alive`; never a close-delimited one. `Keep-Alive: timeout=N` is reported.
 *
 * Malformed (throws ORIGIN_MALFORMED_RESPONSE; the caller destroys the connection):
 *   - a status line other than `HTTP/1.0|1.1 NNN [reason]` with NNN in 100..599; 101 (never asked for);
 *   - a header line with a name that is not a token, whitespace before the colon, obs-fold (a line
 *     starting with whitespace), a control character (bare CR or LF included), or no colon;
 *   - a head over MAX_HEAD_BYTES or with more than MAX_HEADER_LINES lines (trailers alike);
 *   - Transfer-Encoding other than exactly `chunked`, Transfer-Encoding with Content-Length or in an
 *     HTTP/1.0 answer, Content-Length that is not digits, or two different Content-Length values;
 *   - a chunk size that is not hex (or beyond 2^53), chunk data not followed by CRLF, a chunk line
 *     (size and extensions) over MAX_CHUNK_LINE bytes.
 * `finish()` at end of input ends a close-delimited body, and throws ORIGIN_CLOSED when a response
 * was cut short (part of a head, or a length/chunked body not complete).
 */

import { CR, HEX, HTAB, isTextChar, LF, SP } from '../bytes.js';
import { ClientError, malformed } from './client-error.js';
import { MAX_HEADER_LINES, parseResponseHead, scanField } from './response-head.js';

export { MAX_HEADER_LINES };

export interface ResponseSink {
  onResponseHead(
    status: number,
    length: number | undefined,
    location: string | undefined,
    retryAfter?: string | undefined,
  ): void;
  onResponseData(chunk: Buffer): void;
  onResponseEnd(): void;
}

/** Largest response head (status line and headers), like Node's default --max-http-header-size. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Longest chunk-size line, extensions included. */
export const MAX_CHUNK_LINE = 4096;

const HEAD = 0;
const BODY_LENGTH = 1;
const BODY_CLOSE = 2;
const CHUNK_SIZE = 3;
const CHUNK_EXT = 4;
const CHUNK_SIZE_LF = 5;
const CHUNK_DATA = 6;
const CHUNK_DATA_CR = 7;
const CHUNK_DATA_LF = 8;
const TRAILER = 9;
const TRAILER_LF = 10;
const HALTED = 11;

const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');

export class ResponseParser {
  readonly #sink: ResponseSink;
  #state = HEAD;
  /** Bytes of a head split across inputs. */
  #pending: Buffer | undefined;
  /** Body bytes still to come (Content-Length body, or the current chunk). */
  #remaining = 0;
  #chunkDigits = 0;
  #lineBytes = 0;
  #trailerLine = '';
  #trailerLines = 0;
  #trailerBytes = 0;
  #reusable = false;
  #keepAliveMs: number | undefined;
  /** Set when a response ended inside the head (no body): execute() stops there. */
  #ended = false;
  /**
   * The request being answered is a HEAD request: its answer has no body, whatever its head announces.
   * The connection sets it before writing each request.
   */
  forHead = false;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  /** Whether the connection may carry another request after the last complete response. */
  get reusable(): boolean {
    return this.#reusable;
  }

  /** The origin's `Keep-Alive: timeout=N` of the last response, in ms (undefined when not sent). */
  get keepAliveMs(): number | undefined {
    return this.#keepAliveMs;
  }

  /** Stops parsing for good (the connection was destroyed while a sink callback ran). */
  halt(): void {
    this.#state = HALTED;
  }

  /**
   * Parses `data`. Returns how many bytes belonged to the current response: less than `data.length`
   * only when a response ended inside `data` (the rest is unexpected: nothing else was asked for).
   */
  execute(data: Buffer): number {
    this.#ended = false;
    let pos = 0;
    const length = data.length;
    while (pos < length) {
      switch (this.#state) {
        case HEAD: {
          const consumed = this.#head(data, pos);
          if (consumed < 0) return length;
          pos = consumed;
          if (this.#ended) {
            this.#ended = false;
            return pos;
          }
          break;
        }
        case BODY_LENGTH: {
          const take = Math.min(this.#remaining, length - pos);
          this.#remaining -= take;
          const chunk = data.subarray(pos, pos + take);
          pos += take;
          this.#sink.onResponseData(chunk);
          if (this.#halted()) return pos;
          if (this.#remaining === 0) {
            this.#end();
            return pos;
          }
          break;
        }
        case BODY_CLOSE: {
          this.#sink.onResponseData(pos === 0 ? data : data.subarray(pos));
          return length;
        }
        case CHUNK_DATA: {
          const take = Math.min(this.#remaining, length - pos);
          this.#remaining -= take;
          const chunk = data.subarray(pos, pos + take);
          pos += take;
          if (this.#remaining === 0) this.#state = CHUNK_DATA_CR;
          this.#sink.onResponseData(chunk);
          if (this.#halted()) return pos;
          break;
        }
        case HALTED:
          return length;
        default: {
          // The byte-wise states of chunked framing: size lines, CRLFs, trailers.
          const ended = this.#chunkByte(data[pos] as number);
          pos += 1;
          if (ended) {
            this.#end();
            return pos;
          }
        }
      }
    }
    return pos;
  }

  /** End of input: ends a close-delimited body; throws ORIGIN_CLOSED if a response was cut short. */
  finish(): void {
    if (this.#state === BODY_CLOSE) {
      this.#end();
      return;
    }
    if (this.#state === HALTED || (this.#state === HEAD && this.#pending === undefined)) return;
    this.#state = HALTED;
    throw new ClientError('ORIGIN_CLOSED', 'the origin closed the connection in the middle of an answer');
  }

  /** Read after sink callbacks, which may halt the parser (TypeScript would keep the switch's narrowing). */
  #halted(): boolean {
    return this.#state === HALTED;
  }

  #end(): void {
    this.#state = HEAD;
    this.#ended = true;
    this.#sink.onResponseEnd();
  }

  /** Consumes a head from data[pos..]; returns the offset after it, or -1 when it is not complete yet. */
  #head(data: Buffer, pos: number): number {
    let buf = data;
    let start = pos;
    let from = pos;
    const pending = this.#pending;
    if (pending !== undefined) {
      buf = Buffer.concat([pending, pos === 0 ? data : data.subarray(pos)]);
      start = 0;
      from = Math.max(0, pending.length - 3);
    }
    const end = buf.indexOf(CRLFCRLF, from);
    if (end < 0) {
      if (buf.length - start > MAX_HEAD_BYTES) throw malformed(`a head over ${MAX_HEAD_BYTES} bytes`);
      // A copy: the input may be a read buffer the caller reuses.
      this.#pending = Buffer.from(buf.subarray(start));
      return -1;
    }
    if (end + 4 - start > MAX_HEAD_BYTES) throw malformed(`a head over ${MAX_HEAD_BYTES} bytes`);
    this.#pending = undefined;
    this.#parseHead(buf.toString('latin1', start, end));
    // Offset in `data` just past the head.
    return pending === undefined ? end + 4 : pos + end + 4 - pending.length;
  }

  #parseHead(text: string): void {
    const head = parseResponseHead(text);
    const { status, length } = head;
    if (status < 200) {
      if (status === 101) throw malformed('101 Switching Protocols, though no upgrade was asked for');
      return; // interim answer (100 Continue, 103 Early Hints): the real one follows
    }
    this.#keepAliveMs = head.keepAliveMs;
    this.#reusable = head.reusable;
    if (status === 204 || status === 304 || this.forHead) {
      this.#sink.onResponseHead(status, undefined, head.location, head.retryAfter);
      if (this.#state !== HALTED) this.#end();
      return;
    }
    const transferEncoding = head.transferEncoding;
    if (transferEncoding !== undefined) {
      if (head.minor === 0) throw malformed('Transfer-Encoding in an HTTP/1.0 answer');
      if (length !== undefined) throw malformed('both Transfer-Encoding and Content-Length');
      if (transferEncoding.toLowerCase() !== 'chunked') throw malformed('a Transfer-Encoding other than chunked');
      this.#state = CHUNK_SIZE;
      this.#remaining = 0;
      this.#chunkDigits = 0;
      this.#lineBytes = 0;
      this.#trailerLines = 0;
      this.#trailerBytes = 0;
      this.#sink.onResponseHead(status, undefined, head.location, head.retryAfter);
      return;
    }
    if (length === undefined) {
      this.#reusable = false;
      this.#state = BODY_CLOSE;
      this.#sink.onResponseHead(status, undefined, head.location, head.retryAfter);
      return;
    }
    this.#remaining = length;
    this.#state = BODY_LENGTH;
    this.#sink.onResponseHead(status, length, head.location, head.retryAfter);
    if (length === 0 && this.#state === BODY_LENGTH) this.#end();
  }

  /** One byte of chunked framing outside chunk data; true when it ended the message. */
  #chunkByte(c: number): boolean {
    switch (this.#state) {
      case CHUNK_SIZE: {
        const digit = HEX[c] as number;
        if (digit >= 0) {
          this.#chunkDigits += 1;
          this.#remaining = this.#remaining * 16 + digit;
          if (this.#remaining > Number.MAX_SAFE_INTEGER) throw malformed('a chunk size beyond 2^53');
        } else if (this.#chunkDigits === 0) {
          throw malformed('a chunk line without a hex size');
        } else if (c === CR) {
          this.#state = CHUNK_SIZE_LF;
        } else if (c === 0x3b /* ; */ || c === SP || c === HTAB) {
          this.#state = CHUNK_EXT;
        } else {
          throw malformed('a chunk size that is not hex');
        }
        break;
      }
      case CHUNK_EXT:
        // Chunk extensions (and whitespace before them) are skipped; only their characters are checked.
        if (c === CR) this.#state = CHUNK_SIZE_LF;
        else if (!isTextChar(c)) throw malformed('a control character in a chunk extension');
        break;
      case CHUNK_SIZE_LF:
        if (c !== LF) throw malformed('a chunk line not ended by CRLF');
        this.#chunkDigits = 0;
        this.#lineBytes = 0;
        this.#state = this.#remaining === 0 ? TRAILER : CHUNK_DATA;
        return false;
      case CHUNK_DATA_CR:
        if (c !== CR) throw malformed('chunk data longer than its size');
        this.#state = CHUNK_DATA_LF;
        return false;
      case CHUNK_DATA_LF:
        if (c !== LF) throw malformed('chunk data not followed by CRLF');
        this.#state = CHUNK_SIZE;
        return false;
      case TRAILER:
        this.#trailerBytes += 1;
        if (this.#trailerBytes > MAX_HEAD_BYTES) throw malformed(`trailers over ${MAX_HEAD_BYTES} bytes`);
        if (c === CR) this.#state = TRAILER_LF;
        else this.#trailerLine += String.fromCharCode(c);
        return false;
      case TRAILER_LF: {
        if (c !== LF) throw malformed('a bare CR in the trailers');
        const line = this.#trailerLine;
        this.#trailerLine = '';
        if (line === '') return true;
        this.#trailerLines += 1;
        if (this.#trailerLines > MAX_HEADER_LINES) throw malformed(`more than ${MAX_HEADER_LINES} trailer lines`);
        scanField(line, 0, line.length);
        this.#state = TRAILER;
        return false;
      }
    }
    this.#lineBytes += 1;
    if (this.#lineBytes > MAX_CHUNK_LINE) throw malformed(`a chunk line over ${MAX_CHUNK_LINE} bytes`);
    return false;
  }
}
