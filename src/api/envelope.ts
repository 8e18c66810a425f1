/**
 * The one place Cloudflare v4 envelopes are built, for successes and errors alike.
 *
 *   { success: true,  errors: [], messages: [], result, result_info? }
 *   { success: false, errors: [{ code, message, source? }], messages: [], result: null }
 *
 * Invariants the official SDK relies on: every answer is `Content-Type: application/json`; an error is
 * never sent with a 2xx status (the SDK would silently return null) and never as 409 (the SDK retries
 * 409). Errors that are not SwitchyardErrors become API_INTERNAL (500) and are logged, never echoed.
 *
 * A handler may hand back its `result` already serialised as UTF-8 (`JsonText`, e.g. a page of 1000 pools
 * built from bytes cached per pool): its chunks are placed into the envelope's bytes as they are, so the
 * answer is the same bytes `JSON.stringify` of the envelope would give, without building, serialising
 * and encoding the objects again.
 */
import type { ServerResponse } from 'node:http';
import { isSwitchyardError, SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';

export interface ResultInfo {
  page: number;
  per_page: number;
  count: number;
  total_count: number;
  total_pages: number;
}

export interface ErrorItem {
  code: number;
  message: string;
  source?: { pointer: string };
}

export interface SuccessEnvelope {
  success: true;
  errors: [];
  messages: { code: number; message: string }[];
  result: unknown;
  result_info?: ResultInfo;
}

export interface ErrorEnvelope {
  success: false;
  errors: ErrorItem[];
  messages: [];
  result: null;
}

/** One JSON value already serialised: UTF-8 chunks that, concatenated, are its text (see header). */
export class JsonText {
  constructor(readonly chunks: readonly Buffer[]) {}

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** So that a JsonText in any object still serialises to its value (tests, logs). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** What a route handler hands back; the router wraps it. */
export interface ApiReply {
  /** HTTP status of a success; 200 unless the route says otherwise (e.g. 201). */
  status?: number;
  /** Any JSON value, or a JsonText holding one already serialised. */
  result: unknown;
  result_info?: ResultInfo;
  messages?: { code: number; message: string }[];
  /** Sent as the whole JSON body instead of an envelope; only for documents such as openapi.json. */
  raw?: unknown;
}

/**
 * Details a SwitchyardError may carry for the API surface:
 * - `pointer`: JSON pointer of the offending body field, sent as `errors[0].source.pointer`;
 * - `additional_errors`: further error items sent after the first (e.g. 9106 for a missing header).
 */
export interface ApiErrorDetails {
  pointer?: string;
  additional_errors?: ErrorItem[];
}

export function successEnvelope(reply: ApiReply): SuccessEnvelope {
  const body: SuccessEnvelope = { success: true, errors: [], messages: reply.messages ?? [], result: reply.result };
  if (reply.result_info !== undefined) body.result_info = reply.result_info;
  return body;
}

/** Turns anything thrown into an error envelope with its HTTP status and headers. */
export function errorResponse(
  err: unknown,
  logger: Logger,
): { status: number; headers: Readonly<Record<string, string>>; body: ErrorEnvelope } {
  const error = isSwitchyardError(err) ? err : internal(err, logger);
  let status = error.httpStatus;
  // Guard the SDK invariants even if a catalog entry is wrong: no 2xx errors, no retried 409.
  if (status < 400 || status === 409) status = status === 409 ? 400 : 500;
  const first: ErrorItem = { code: error.spec.v4 ?? 10001, message: error.message };
  const details = (error.details ?? {}) as ApiErrorDetails;
  if (typeof details.pointer === 'string') first.source = { pointer: details.pointer };
  const extra = Array.isArray(details.additional_errors) ? details.additional_errors : [];
  return {
    status,
    headers: error.headers,
    body: { success: false, errors: [first, ...extra], messages: [], result: null },
  };
}

function internal(err: unknown, logger: Logger): SwitchyardError {
  logger.error('api handler failed', { err });
  return new SwitchyardError('API_INTERNAL', 'Internal error; the server log has details.', { cause: err });
}

/** The bytes (or text) of `successEnvelope(reply)`, taking a JsonText result's chunks as they are. */
export function successBody(reply: ApiReply): string | Buffer {
  if (!(reply.result instanceof JsonText)) return JSON.stringify(successEnvelope(reply));
  const info = reply.result_info === undefined ? '' : `,"result_info":${JSON.stringify(reply.result_info)}`;
  const head = `{"success":true,"errors":[],"messages":${JSON.stringify(reply.messages ?? [])},"result":`;
  return Buffer.concat([Buffer.from(head), ...reply.result.chunks, Buffer.from(`${info}}`)]);
}

/** Writes any JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Writes a JSON body already serialised; the only function in `api/` that calls `res.end` with a payload. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  payload: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  res.end(payload);
}
