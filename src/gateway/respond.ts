/**
 * The one place where gateway errors become JSON-RPC 2.0 wire bytes. A SwitchyardError carries its HTTP
 * status and JSON-RPC code (errors/catalog.ts); `details` becomes `error.data`; `headers` are added to
 * the HTTP response. Ids are raw JSON bytes exactly as the client sent them (`null` when unknown).
 */
import type { ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { isSwitchyardError, SwitchyardError } from '../errors/base.js';

const NULL_ID = Buffer.from('null');

/** Any thrown value as a SwitchyardError; unexpected ones become GATEWAY_INTERNAL (details stay in the log). */
export function asSwitchyardError(err: unknown): SwitchyardError {
  if (isSwitchyardError(err)) return err;
  return new SwitchyardError('GATEWAY_INTERNAL', 'Internal gateway error; retry, and report it if it persists.', {
    cause: err,
  });
}

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
  res: ServerResponse,
  status: number,
  body: Buffer | undefined,
  headers: Readonly<Record<string, string>> = {},
  more?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent || res.destroyed) return;
  // All headers go to writeHead as one flat list: no per-header setHeader bookkeeping on the hot path.
  // `more` follows `headers` (callers keep their names apart), so nobody merges objects per request.
  const flat: Array<string | number> = [];
  for (const name in headers) flat.push(name, headers[name] as string);
  if (more !== undefined) for (const name in more) flat.push(name, more[name] as string);
  if (body === undefined || status === 204) {
    res.writeHead(status, flat);
    res.end();
    return;
  }
  flat.push('content-type', 'application/json', 'content-length', body.length);
  res.writeHead(status, flat);
  res.end(body);
}

export function sendError(
  res: ServerResponse,
  err: SwitchyardError,
  rawId?: Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendBody(res, err.httpStatus, errorResponse(err, rawId), { ...headers, ...err.headers });
}

/**
 * Sends a large answer while it arrives: `head` (the client's id already spliced in), then `rest` piped
 * with backpressure. If the origin fails midway the connection is cut (the client sees a truncated
 * answer, never a wrong one); if the client leaves, `rest` is destroyed, which stops the origin request.
 */
export function sendStream(
  res: ServerResponse,
  status: number,
  head: Buffer,
  rest: Readable,
  length: number | undefined,
  headers: Readonly<Record<string, string>> = {},
  more?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent || res.destroyed) {
    rest.destroy();
    return;
  }
  const flat: Array<string | number> = [];
  for (const name in headers) flat.push(name, headers[name] as string);
  if (more !== undefined) for (const name in more) flat.push(name, more[name] as string);
  flat.push('content-type', 'application/json');
  if (length !== undefined) flat.push('content-length', length);
  res.writeHead(status, flat);
  res.write(head);
  pipeline(rest, res, () => {
    // pipeline already destroyed both sides on failure; nothing else to undo.
  });
}
