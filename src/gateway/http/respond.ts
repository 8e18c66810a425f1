/**
 * The one place where gateway errors become JSON-RPC 2.0 wire bytes. A SwitchyardError carries its HTTP
 * status and JSON-RPC code (errors/catalog.ts); `details` becomes `error.data`; `headers` are added to
 * the HTTP response. Ids are raw JSON bytes exactly as the client sent them (`null` when unknown).
 * HTTP-level refusals of the listener (wire/errors.ts: malformed request, head too large, body too
 * large, unsupported Transfer-Encoding, request timeout) become their catalog errors here too.
 */
import type { Readable } from 'node:stream';
import { isSwitchyardError, SwitchyardError } from '../../errors/base.js';
import type { ErrorCode } from '../../errors/catalog.js';
import { WireError, type WireErrorKind } from '../../http1/server/request-refusal.js';
import type { Exchange } from '../../http1/server/server-exchange.js';

const NULL_ID = Buffer.from('null');

const WIRE_CODES: Record<WireErrorKind, ErrorCode> = {
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

/** Any thrown value as a SwitchyardError; unexpected ones become GATEWAY_INTERNAL (details stay in the log). */
export function asSwitchyardError(err: unknown): SwitchyardError {
  if (isSwitchyardError(err)) return err;
  if (err instanceof WireError) {
    // The connection closes after each of these: the rest of the request cannot be read reliably.
    if (err.kind === 'body-too-large') return bodyTooLarge(err.limit ?? 0);
    return new SwitchyardError(WIRE_CODES[err.kind], `${err.message} ${ADVICE[err.kind]}`, { headers: CLOSE });
  }
  return new SwitchyardError('GATEWAY_INTERNAL', 'Internal gateway error; retry, and report it if it persists.', {
    cause: err,
  });
}

const ADVICE: Record<WireErrorKind, string> = {
  malformed: 'Send a well-formed HTTP/1.1 request (CRLF line endings, one Content-Length or chunked).',
  'head-too-large': 'Send at most 16 KiB of request line and headers, in at most 100 header lines.',
  'body-too-large': '',
  'unsupported-encoding': 'Send the body with Content-Length or Transfer-Encoding: chunked.',
  timeout: 'Send the whole request (headers and body) promptly.',
  aborted: '',
};

/** `{"jsonrpc":"2.0","id":<raw>,"error":{code,message,data?}}` as bytes. */
export function errorResponse(err: SwitchyardError, rawId: Buffer = NULL_ID): Buffer {
  const error: { code: number; message: string; data?: unknown } = {
    code: err.spec.rpc ?? -32603,
    message: err.message,
  };
  if (err.details !== undefined) error.data = err.details;
  return Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":'),
    rawId,
    Buffer.from(`,"error":${JSON.stringify(error)}}`),
  ]);
}

export function sendBody(
  ex: Exchange,
  status: number,
  body: Buffer | undefined,
  headers: Readonly<Record<string, string>> = {},
  more?: Readonly<Record<string, string>>,
): void {
  if (ex.answered) return;
  // All headers go out as one flat list; `more` follows `headers` (callers keep their names apart),
  // so nobody merges objects per request. The wire layer adds content-length and connection.
  const flat: Array<string | number> = [];
  for (const name in headers) flat.push(name, headers[name] as string);
  if (more !== undefined) for (const name in more) flat.push(name, more[name] as string);
  if (body === undefined || status === 204) {
    ex.send(status, flat);
    return;
  }
  flat.push('content-type', 'application/json');
  ex.send(status, flat, body);
}

export function sendError(
  ex: Exchange,
  err: SwitchyardError,
  rawId?: Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendBody(ex, err.httpStatus, errorResponse(err, rawId), headers, err.headers);
}

/**
 * Sends a large answer while it arrives: `head` (the client's id already spliced in), then `rest` with
 * backpressure. If the origin fails midway the connection is cut (the client sees a truncated answer,
 * never a wrong one); if the client leaves, `rest` is destroyed, which stops the origin request.
 */
export function sendStream(
  ex: Exchange,
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
  const flat: Array<string | number> = [];
  for (const name in headers) flat.push(name, headers[name] as string);
  if (more !== undefined) for (const name in more) flat.push(name, more[name] as string);
  flat.push('content-type', 'application/json');
  ex.stream(status, flat, head, rest, length);
}
