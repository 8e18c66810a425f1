/**
 * Response heads as latin1 strings: status line, `date` (one string per second, made when the second
 * changes, not per response), the caller's headers in order, then the framing headers this layer owns
 * (`content-length` or `transfer-encoding: chunked`, and `connection`). A caller's own `connection`
 * header is not copied: `connection: close` from the caller only asks this layer to close.
 *
 * Caller headers are trusted: the gateway builds them (never copies request headers into them), so
 * names and values are not re-checked for CR/LF here.
 */
import { STATUS_CODES } from 'node:http';

let dateSecond = -1;
let dateValue = '';

/** The IMF-fixdate of the current second. */
export function httpDate(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateValue = new Date(second * 1000).toUTCString();
  }
  return dateValue;
}

const statusLines: string[] = [];

function statusLine(status: number): string {
  let line = statusLines[status];
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\ndate: `;
    statusLines[status] = line;
  }
  return line;
}

export const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');

/** How the body is framed. */
export const CHUNKED = -1;
/** No length and no chunking: the connection's close ends the body (HTTP/1.0 clients). */
export const CLOSE_DELIMITED = -2;
/** No body and no content-length (204). */
export const NO_BODY = -3;

export type HeaderList = ReadonlyArray<string | number>;

/** True when the caller's headers carry `connection: close`. */
export function asksClose(headers: HeaderList): boolean {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === 'connection' && String(headers[i + 1]).toLowerCase() === 'close') return true;
  }
  return false;
}

/**
 * The head for `status` with `headers` (name, value, … flat; names lowercase). `length` ≥ 0 is a
 * content-length, else CHUNKED / CLOSE_DELIMITED / NO_BODY. `close` adds `connection: close`;
 * `keepAlive10` adds `connection: keep-alive` (an HTTP/1.0 client that asked for it).
 */
export function responseHead(
  status: number,
  headers: HeaderList,
  length: number,
  close: boolean,
  keepAlive10: boolean,
): string {
  let head = statusLine(status) + httpDate() + '\r\n';
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] as string;
    if (name === 'connection') continue;
    head += name + ': ' + headers[i + 1] + '\r\n';
  }
  if (length >= 0) head += 'content-length: ' + length + '\r\n';
  else if (length === CHUNKED) head += 'transfer-encoding: chunked\r\n';
  if (close) head += 'connection: close\r\n\r\n';
  else if (keepAlive10) head += 'connection: keep-alive\r\n\r\n';
  else head += '\r\n';
  return head;
}
