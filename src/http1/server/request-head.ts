/**
 * The head of one request, from the line spans the parser found (request line, then header lines; CRLF
 * excluded) to a `RequestHead`, or the refusal it earns (request-parser.ts lists what is refused and why).
 * Header names most requests carry come from a table of constants, so no string is made for them.
 */

import { decimalDigits, HTAB, isTextChar, SP, TCHAR } from '../bytes.js';

/** 15 decimal digits stay exact in a JS number. */
const CONTENT_LENGTH_MAX_DIGITS = 15;
const COLON = 58;

export interface RequestHead {
  readonly method: string;
  readonly target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minor: number;
  /** name, value, name, value… in arrival order; names lowercase. */
  readonly headers: string[];
  /** HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`. */
  readonly keepAlive: boolean;
  /** HTTP/1.1 with `Expect: 100-continue`. */
  readonly expectContinue: boolean;
  /** Declared length; 0 without a body; -1 when chunked. */
  readonly contentLength: number;
}

/** Why a head is refused (a RequestRefusal kind) and the message the client gets. */
export interface HeadRefusal {
  readonly refused: 'malformed' | 'unsupported-encoding';
  readonly message: string;
}

function refuse(refused: HeadRefusal['refused'], message: string): HeadRefusal {
  return { refused, message };
}

/** `spans`: [start, end) of the request line then of each header line, relative to `base`. */
export function parseRequestHead(buf: Buffer, base: number, spans: readonly number[]): RequestHead | HeadRefusal {
  const head = new HeadFields();
  const refused = readRequestLine(buf, base + (spans[0] as number), base + (spans[1] as number), head);
  if (refused !== undefined) return refused;
  for (let s = 2; s < spans.length; s += 2) {
    const line = readHeaderLine(buf, base + (spans[s] as number), base + (spans[s + 1] as number), head);
    if (line !== undefined) return line;
  }
  return framed(head);
}

/**
 * What a head's lines say, gathered line by line (one object per request: the parts below fill it in
 * place, so splitting the parser into them costs no object per line).
 */
class HeadFields {
  method = '';
  target = '';
  minor = 1;
  readonly headers: string[] = [];
  contentLength = -1;
  transferEncoding: string | undefined = undefined;
  hosts = 0;
  close = false;
  keepAliveAsked = false;
  expectContinue = false;
}

/** Request line: METHOD SP target SP HTTP/1.x, in `buf[i, lineEnd)`. */
function readRequestLine(buf: Buffer, i: number, lineEnd: number, head: HeadFields): HeadRefusal | undefined {
  const methodStart = i;
  while (i < lineEnd && TCHAR[buf[i] as number] === 1) i += 1;
  if (i === methodStart || i >= lineEnd || buf[i] !== SP) return refuse('malformed', 'The request line is malformed.');
  head.method =
    i - methodStart === 4 && buf[methodStart] === 80 && buf[methodStart + 1] === 79 && buf[methodStart + 2] === 83
      ? buf[methodStart + 3] === 84
        ? 'POST'
        : buf.toString('latin1', methodStart, i)
      : buf.toString('latin1', methodStart, i);
  i += 1;
  const targetStart = i;
  while (i < lineEnd) {
    const c = buf[i] as number;
    if (c === SP) break;
    if (c < 0x21 || c > 0x7e) return refuse('malformed', 'The request target has a byte outside 0x21–0x7E.');
    i += 1;
  }
  if (i === targetStart || i >= lineEnd) return refuse('malformed', 'The request line is malformed.');
  head.target = buf.toString('latin1', targetStart, i);
  i += 1;
  if (
    lineEnd - i !== 8 ||
    buf[i] !== 72 || // H
    buf[i + 1] !== 84 || // T
    buf[i + 2] !== 84 || // T
    buf[i + 3] !== 80 || // P
    buf[i + 4] !== 47 || // /
    buf[i + 5] !== 49 || // 1
    buf[i + 6] !== 46 || // .
    (buf[i + 7] !== 48 && buf[i + 7] !== 49)
  ) {
    return refuse('malformed', 'Only HTTP/1.1 and HTTP/1.0 requests are served.');
  }
  head.minor = (buf[i + 7] as number) - 48;
  return undefined;
}

/** One header line `buf[start, end)`: its name (lowercase) and trimmed value, then what it means. */
function readHeaderLine(buf: Buffer, start: number, end: number, head: HeadFields): HeadRefusal | undefined {
  const first = buf[start];
  if (first === SP || first === HTAB) return refuse('malformed', 'Folded header lines (obs-fold) are refused.');
  let j = start;
  let upper = false;
  while (j < end) {
    const c = buf[j] as number;
    if (c === COLON) break;
    if (TCHAR[c] !== 1)
      return refuse('malformed', 'A header name has an invalid character (or space before the colon).');
    if (c >= 65 && c <= 90) upper = true;
    j += 1;
  }
  if (j === start || j === end) return refuse('malformed', 'A header line has no name or no colon.');
  let name = knownName(buf, start, j);
  if (name === undefined) {
    name = buf.toString('latin1', start, j);
    if (upper) name = name.toLowerCase();
  }
  let valueStart = j + 1;
  while (valueStart < end && (buf[valueStart] === SP || buf[valueStart] === HTAB)) valueStart += 1;
  let valueEnd = end;
  while (valueEnd > valueStart && (buf[valueEnd - 1] === SP || buf[valueEnd - 1] === HTAB)) valueEnd -= 1;
  for (let k = valueStart; k < valueEnd; k += 1) {
    if (!isTextChar(buf[k] as number)) return refuse('malformed', 'A header value has a control byte.');
  }
  const value = buf.toString('latin1', valueStart, valueEnd);
  head.headers.push(name, value);
  return noteHeader(name, value, head);
}

/** The headers that decide framing and the connection: Content-Length, Transfer-Encoding, Host, … */
function noteHeader(name: string, value: string, head: HeadFields): HeadRefusal | undefined {
  switch (name) {
    case 'content-length': {
      const parsed = decimalDigits(value, CONTENT_LENGTH_MAX_DIGITS);
      if (parsed < 0) return refuse('malformed', 'Content-Length must be 1 to 15 digits.');
      if (head.contentLength !== -1 && parsed !== head.contentLength) {
        return refuse('malformed', 'The request has differing Content-Length values.');
      }
      head.contentLength = parsed;
      break;
    }
    case 'transfer-encoding':
      head.transferEncoding = head.transferEncoding === undefined ? value : `${head.transferEncoding},${value}`;
      break;
    case 'host':
      head.hosts += 1;
      break;
    case 'connection':
      for (const token of value.toLowerCase().split(',')) {
        const t = token.trim();
        if (t === 'close') head.close = true;
        else if (t === 'keep-alive') head.keepAliveAsked = true;
      }
      break;
    case 'expect':
      if (head.minor === 1 && value.toLowerCase() === '100-continue') head.expectContinue = true;
      break;
  }
  return undefined;
}

/** The whole head's rules (one Host; how the body is framed), then the RequestHead. */
function framed(head: HeadFields): RequestHead | HeadRefusal {
  const { minor, contentLength, transferEncoding } = head;
  if (head.hosts > 1) return refuse('malformed', 'The request has more than one Host header.');
  if (head.hosts === 0 && minor === 1) return refuse('malformed', 'An HTTP/1.1 request must carry a Host header.');
  let chunked = false;
  if (transferEncoding !== undefined) {
    if (contentLength !== -1) return refuse('malformed', 'Content-Length and Transfer-Encoding together are refused.');
    if (minor === 0) return refuse('malformed', 'Transfer-Encoding is not allowed in an HTTP/1.0 request.');
    const codings = transferEncoding.split(',');
    if ((codings[codings.length - 1] as string).trim().toLowerCase() !== 'chunked') {
      return refuse('malformed', 'Transfer-Encoding must end with chunked.');
    }
    if (codings.length > 1) {
      return refuse('unsupported-encoding', 'Only Transfer-Encoding: chunked (alone) is supported.');
    }
    chunked = true;
  }
  return {
    method: head.method,
    target: head.target,
    minor,
    headers: head.headers,
    keepAlive: minor === 1 ? !head.close : head.keepAliveAsked && !head.close,
    expectContinue: head.expectContinue,
    contentLength: chunked ? -1 : contentLength === -1 ? 0 : contentLength,
  };
}

/** Header names most requests carry, as constants: matched without making (and hashing) a string. */
const KNOWN_NAMES: ReadonlyArray<{ name: string; bytes: Uint8Array }> = [
  'host',
  'content-type',
  'content-length',
  'connection',
  'user-agent',
  'accept',
  'accept-encoding',
  'authorization',
  'transfer-encoding',
  'expect',
  'origin',
].map((name) => ({ name, bytes: Buffer.from(name, 'latin1') }));

/** The constant for the header name `buf[start, end)` (any case), if it is one of KNOWN_NAMES. */
function knownName(buf: Buffer, start: number, end: number): string | undefined {
  const length = end - start;
  for (const known of KNOWN_NAMES) {
    const bytes = known.bytes;
    if (bytes.length !== length) continue;
    let i = 0;
    // OR 0x20 lower-cases a letter and keeps '-'; no other token byte maps onto a lower-case letter or '-'.
    while (i < length && ((buf[start + i] as number) | 0x20) === bytes[i]) i += 1;
    if (i === length) return known.name;
  }
  return undefined;
}

/** `upgrade` as an element of a Connection list. */
const UPGRADE_TOKEN = /(?:^|,)[ \t]*upgrade[ \t]*(?:,|$)/i;

/**
 * The request asks to switch protocols and may be handed to `Http1App.upgrade`: HTTP/1.1 (an Upgrade
 * in HTTP/1.0 is ignored, RFC 9110 §7.8), no body, `upgrade` in `Connection`, and an `Upgrade` header
 * naming one of `protocols` (lowercase names, versions ignored; undefined: any protocol). A request
 * for another protocol (e.g. `h2c`) is an ordinary request: a server may ignore Upgrade (RFC 9110 §7.8).
 */
export function asksUpgrade(head: RequestHead, protocols?: readonly string[]): boolean {
  if (head.minor !== 1 || head.contentLength !== 0) return false;
  const headers = head.headers;
  let upgrade = false;
  let connection = false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    if (name === 'upgrade') upgrade ||= protocols === undefined || namesProtocol(headers[i + 1] as string, protocols);
    else if (name === 'connection' && UPGRADE_TOKEN.test(headers[i + 1] as string)) connection = true;
  }
  return upgrade && connection;
}

/** An Upgrade list (`websocket`, `h2c, foo/2`) names one of `protocols`. */
function namesProtocol(value: string, protocols: readonly string[]): boolean {
  for (const element of value.split(',')) {
    const name = (element.split('/')[0] as string).trim().toLowerCase();
    if (protocols.includes(name)) return true;
  }
  return false;
}
