/**
 * The one place where gateway errors become JSON-RPC 2.0 wire bytes. A SwitchyardError carries its HTTP
 * status and JSON-RPC code (errors/catalog.ts); `details` becomes `error.data`; `headers` are added to
 * the HTTP response. Ids are raw JSON bytes exactly as the client sent them (`null` when unknown).
 * HTTP-level refusals of the listener (http1 RequestRefusal: malformed request, head too large, body too
 * large, unsupported Transfer-Encoding, request timeout)  become their catalog errors here too
 * (`edgeError`). The JSON-RPC error body itself is rpc/errors.ts `errorResponse`.
 * Every answer of a request the edge traced (`traceOf`: its RequestTrace, kept in the exchange's `data`)
 * carries `X-Request-Id`, and its error bodies `data.request_id`.
 */
import type { Readable } from 'node:stream';
import { SwitchyardError } from '../../errors/base.js';
import type { ErrorCode } from '../../errors/catalog.js';
import { type RefusalKind, RequestRefusal, type ServerExchange } from '../../http1/index.js';
import type { Logger } from '../../log.js';
import { REQUEST_ID_HEADER } from '../../model/request-id.js';
import { asSwitchyardError, errorResponse } from '../rpc/errors.js';
import { RequestTrace } from '../rpc/request-trace.js';

const WIRE_CODES: Record<RefusalKind, ErrorCode> = {
  malformed: 'HTTP_BAD_REQUEST',
  'head-too-large': 'HTTP_HEADERS_TOO_LARGE',
  'body-too-large': 'BODY_TOO_LARGE',
  'unsupported-encoding': 'HTTP_NOT_IMPLEMENTED',
  timeout: 'HTTP_REQUEST_TIMEOUT',
  // Never answered (the client is gone); a 400 if it ever were.
  aborted: 'HTTP_BAD_REQUEST',
};

const CLOSE = { connection: 'close' };

/** The BODY_TOO_LARGE error for a `limit` (gateway.max_body_bytes). */
export function bodyTooLarge(limit: number): SwitchyardError {
  return new SwitchyardError(
    'BODY_TOO_LARGE',
    `The request body is larger than ${limit} bytes (gateway.max_body_bytes); send smaller requests or split the batch.`,
    { details: { max_body_bytes: limit }, headers: CLOSE },
  );
}

/** Echoed request paths are cut here (a 404 names the path it did not find, not a whole upload of it). */
const MAX_ECHOED_PATH = 200;

/**
 * What an answer may repeat of a request target: its path, JSON-quoted, never the query string or a
 * fragment — they can carry secrets (`?key=swk_…`) that must not come back in bodies that get logged,
 * cached or pasted into bug reports.
 */
export function echoedPath(target: string): string {
  const path = target.split(/[?#]/, 1)[0] ?? '';
  return JSON.stringify(path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}…` : path);
}

/**
 * Any thrown value at the HTTP edge as a SwitchyardError: the listener's refusals (RequestRefusal) get
 * their catalog errors here; everything else as rpc/errors.ts `asSwitchyardError`.
 */
export function edgeError(err: unknown, logger: Pick<Logger, 'error'>): SwitchyardError {
  if (err instanceof RequestRefusal) {
    // The connection closes after each of these: the rest of the request cannot be read reliably.
    if (err.kind === 'body-too-large') return bodyTooLarge(err.limit ?? 0);
    return new SwitchyardError(WIRE_CODES[err.kind], `${err.message} ${ADVICE[err.kind]}`, { headers: CLOSE });
  }
  return asSwitchyardError(err, logger);
}

const ADVICE: Record<RefusalKind, string> = {
  malformed: 'Send a well-formed HTTP/1.1 request (CRLF line endings, one Content-Length or chunked).',
  'head-too-large': 'Send at most 16 KiB of request line and headers, in at most 100 header lines.',
  'body-too-large': '',
  'unsupported-encoding': 'Send the body with Content-Length or Transfer-Encoding: chunked.',
  timeout: 'Send the whole request (headers and body) promptly.',
  aborted: '',
};

/** The request's trace, when the edge made one (http/edge.ts, ws/upgrade.ts keep it in `data`). */
export function traceOf(ex: ServerExchange): RequestTrace | undefined {
  return ex.data instanceof RequestTrace ? ex.data : undefined;
}

export function sendBody(
  ex: ServerExchange,
  status: number,
  body: Buffer | undefined,
  headers: Readonly<Record<string, string>> = {},
  more?: Readonly<Record<string, string>>,
): void {
  if (ex.answered) return;
  // All headers go out as one flat list; `more` follows `headers` (callers keep their names apart),
  // so nobody merges objects per request. The wire layer adds content-length and connection.
  const flat = headerList(ex, headers, more);
  if (body === undefined || status === 204) {
    ex.send(status, flat);
    return;
  }
  flat.push('content-type', 'application/json');
  ex.send(status, flat, body);
}

export function sendError(
  ex: ServerExchange,
  err: SwitchyardError,
  rawId?: Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  const trace = traceOf(ex);
  trace?.error(err.spec.rpc ?? -32603);
  sendBody(ex, err.httpStatus, errorResponse(err, rawId, trace?.id), headers, err.headers);
}

/**
 * Sends a large answer while it arrives: `head` (the client's id already spliced in), then `rest` with
 * backpressure. If the origin fails midway the connection is cut (the client sees a truncated answer,
 * never a wrong one); if the client leaves, `rest` is destroyed, which stops the origin request.
 */
export function sendStream(
  ex: ServerExchange,
  status: number,
  head: Buffer,
  rest: Readable,
  length: number | undefined,
  headers: Readonly<Record<string, string>> = {},
  more?: Readonly<Record<string, string>>,
): void {
  if (ex.answered) {
    rest.destroy();
    return;
  }
  const flat = headerList(ex, headers, more);
  flat.push('content-type', 'application/json');
  ex.stream(status, flat, head, rest, length);
}

/** `headers`, then `more`, then the request id, as one flat list (no merged object per request). */
function headerList(
  ex: ServerExchange,
  headers: Readonly<Record<string, string>>,
  more: Readonly<Record<string, string>> | undefined,
): Array<string | number> {
  const flat: Array<string | number> = [];
  for (const name in headers) flat.push(name, headers[name] as string);
  if (more !== undefined) for (const name in more) flat.push(name, more[name] as string);
  const trace = traceOf(ex);
  if (trace !== undefined) flat.push(REQUEST_ID_HEADER, trace.id);
  return flat;
}
