/**
 * The fields of an origin answer's head (status line and header lines, without the final CRLF CRLF),
 * checked strictly, for the response parser (response-parser.ts, which lists what is malformed). Only the
 * headers that frame the message or decide reuse are read (Content-Length, Transfer-Encoding,
 * Connection, Keep-Alive), and Location (a redirect's target, for callers that follow redirects); the
 * others are validated and dropped. Throws ORIGIN_MALFORMED_RESPONSE.
 */

import { decimalDigits, HTAB, isTextChar, SP, TCHAR } from '../bytes.js';
import { malformed } from './client-error.js';

/** Most header lines in a head, and in a chunked body's trailers. */
export const MAX_HEADER_LINES = 100;

export interface ResponseHead {
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minor: number;
  readonly status: number;
  /** Content-Length, when announced. */
  readonly length: number | undefined;
  /** Transfer-Encoding values, comma-joined, when sent. */
  readonly transferEncoding: string | undefined;
  /** Whether the connection may carry another request after this answer (framing aside). */
  readonly reusable: boolean;
  /** The origin's `Keep-Alive: timeout=N`, in ms. */
  readonly keepAliveMs: number | undefined;
  /** The Location header's value, when sent exactly once (a second one makes it no usable target). */
  readonly location: string | undefined;
  /** The Retry-After header's value (raw), when sent. */
  readonly retryAfter: string | undefined;
}

/**
 * Where the value of the header line `scanField` just checked starts and ends. Module variables, not a
 * returned object: a head is parsed per forwarded call, and strings are made only for the few header
 * names the client reads.
 */
let valueStart = 0;
let valueEnd = 0;

/**
 * Checks the header line `text[from, to)` (without its CRLF): a token name, a colon, a value of text
 * characters. Returns the colon's offset; the trimmed value's span is left in valueStart/valueEnd.
 */
export function scanField(text: string, from: number, to: number): number {
  const first = text.charCodeAt(from);
  if (first === SP || first === HTAB) throw malformed('obsolete line folding in a header');
  const colon = text.indexOf(':', from);
  if (colon <= from || colon >= to) throw malformed('a header line without a name and colon');
  for (let i = from; i < colon; i += 1) {
    const c = text.charCodeAt(i);
    if (TCHAR[c] !== 1) throw malformed('a header name that is not a token');
  }
  let start = colon + 1;
  let end = to;
  while (start < end && (text.charCodeAt(start) === SP || text.charCodeAt(start) === HTAB)) start += 1;
  while (end > start && (text.charCodeAt(end - 1) === SP || text.charCodeAt(end - 1) === HTAB)) end -= 1;
  for (let i = start; i < end; i += 1) {
    if (!isTextChar(text.charCodeAt(i))) throw malformed('a control character in a header value');
  }
  valueStart = start;
  valueEnd = end;
  return colon;
}

/**
 * Whether the token at `text[from, from + name.length)` is `name` (lower-case letters and '-'),
 * ignoring case. OR-ing 0x20 lower-cases a letter and leaves '-' as it is; no other token character
 * maps onto a lower-case letter or '-'.
 */
function nameIs(text: string, from: number, name: string): boolean {
  for (let i = 0; i < name.length; i += 1) if ((text.charCodeAt(from + i) | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}

/** True when the comma-separated `list` holds `token` (lower-case letters and '-'; matched in any case). */
function listHas(list: string, token: string): boolean {
  // The usual case, one value (`keep-alive`, `close`), without splitting or new strings.
  if (!list.includes(',')) return list.length === token.length && nameIs(list, 0, token);
  for (const item of list.split(',')) if (item.trim().toLowerCase() === token) return true;
  return false;
}

/** The head's fields; throws ORIGIN_MALFORMED_RESPONSE. */
export function parseResponseHead(head: string): ResponseHead {
  const lineEnd = head.indexOf('\r\n');
  const statusEnd = lineEnd < 0 ? head.length : lineEnd;
  const { minor, status } = parseStatusLine(head, statusEnd);
  let length: number | undefined;
  let transferEncoding: string | undefined;
  let connection = '';
  let keepAlive: string | undefined;
  let location: string | undefined;
  let locations = 0;
  let retryAfter: string | undefined;
  let lines = 0;
  let at = statusEnd;
  while (at < head.length) {
    const from = at + 2;
    const next = head.indexOf('\r\n', from);
    const stop = next < 0 ? head.length : next;
    lines += 1;
    if (lines > MAX_HEADER_LINES) throw malformed(`more than ${MAX_HEADER_LINES} header lines`);
    const nameLength = scanField(head, from, stop) - from;
    at = stop;
    if (nameLength === 14 && nameIs(head, from, 'content-length')) {
      const announced = parseLength(head.slice(valueStart, valueEnd));
      if (length !== undefined && length !== announced) throw malformed('two different Content-Length values');
      length = announced;
    } else if (nameLength === 17 && nameIs(head, from, 'transfer-encoding')) {
      const value = head.slice(valueStart, valueEnd);
      transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
    } else if (nameLength === 10 && nameIs(head, from, 'connection')) {
      const value = head.slice(valueStart, valueEnd);
      connection = connection === '' ? value : `${connection}, ${value}`;
    } else if (nameLength === 10 && nameIs(head, from, 'keep-alive')) {
      keepAlive = head.slice(valueStart, valueEnd);
    } else if (nameLength === 8 && nameIs(head, from, 'location')) {
      location = head.slice(valueStart, valueEnd);
      locations += 1;
    } else if (nameLength === 11 && nameIs(head, from, 'retry-after')) {
      retryAfter = head.slice(valueStart, valueEnd);
    }
  }
  return {
    minor,
    status,
    length,
    transferEncoding,
    reusable: minor === 1 ? !listHas(connection, 'close') : listHas(connection, 'keep-alive'),
    keepAliveMs: keepAlive === undefined ? undefined : keepAliveTimeout(keepAlive),
    location: locations === 1 ? location : undefined,
    retryAfter,
  };
}

/** `HTTP/1.x NNN[ reason]` from head[0..end). */
function parseStatusLine(head: string, end: number): { minor: number; status: number } {
  if (end < 12 || !head.startsWith('HTTP/1.') || head.charCodeAt(8) !== SP)
    throw malformed('not an HTTP/1.x status line');
  const minor = head.charCodeAt(7) - 48;
  if (minor !== 0 && minor !== 1) throw malformed('not an HTTP/1.x status line');
  let status = 0;
  for (let i = 9; i < 12; i += 1) {
    const d = head.charCodeAt(i) - 48;
    if (d < 0 || d > 9) throw malformed('a status code that is not three digits');
    status = status * 10 + d;
  }
  if (status < 100 || status > 599) throw malformed(`status ${status}`);
  if (end > 12) {
    if (head.charCodeAt(12) !== SP) throw malformed('a status code that is not three digits');
    for (let i = 13; i < end; i += 1) {
      if (!isTextChar(head.charCodeAt(i))) throw malformed('a control character in the status line');
    }
  }
  return { minor, status };
}

/** A Content-Length value: digits, or a list of the same digits (`5, 5`, RFC 9110 §8.6). */
function parseLength(value: string): number {
  // The usual case, 1 to 15 digits alone, without splitting or a regular expression.
  const alone = decimalDigits(value, 15);
  if (alone >= 0) return alone;
  let length: number | undefined;
  for (const item of value.split(',')) {
    const digits = item.trim();
    if (!/^\d{1,15}$/.test(digits)) throw malformed('a Content-Length that is not a number');
    const n = Number(digits);
    if (length !== undefined && n !== length) throw malformed('two different Content-Length values');
    length = n;
  }
  return length as number;
}

/** `timeout=N` of a Keep-Alive header, in ms; undefined when absent or not a number. */
function keepAliveTimeout(value: string): number | undefined {
  // The usual value, `timeout=N` alone (Node's servers send it), without splitting or a regular expression.
  if (value.length > 8 && nameIs(value, 0, 'timeout') && value.charCodeAt(7) === 0x3d /* = */) {
    const seconds = decimalDigits(value.slice(8), 9);
    if (seconds >= 0) return seconds * 1000;
  }
  for (const param of value.split(',')) {
    const [key, raw] = param.split('=');
    if (key?.trim().toLowerCase() === 'timeout' && raw !== undefined && /^\s*\d{1,9}\s*$/.test(raw)) {
      return Number(raw) * 1000;
    }
  }
  return undefined;
}
