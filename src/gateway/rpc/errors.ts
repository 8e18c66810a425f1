/**
 * Gateway errors as JSON-RPC 2.0 wire bytes. A SwitchyardError carries its HTTP status and JSON-RPC code
 * (errors/catalog.ts); `details` becomes `error.data`. Ids are raw JSON bytes exactly as the client sent
 * them (`null` when unknown). HTTP-level refusals are mapped at the edge (http/respond.ts `edgeError`).
 */
import { isSwitchyardError, SwitchyardError } from '../../errors/base.js';
import type { Logger } from '../../log.js';
import { NULL_ID } from './id-splice.js';

/**
 * Any thrown value as a SwitchyardError. An unexpected one becomes GATEWAY_INTERNAL and is logged here,
 * once, with its details (the client sees only the catalog message): the one place that decides it, for
 * the HTTP edge (http/respond.ts `edgeError`) and the JSON-RPC handler alike.
 */
export function asSwitchyardError(err: unknown, logger: Pick<Logger, 'error'>): SwitchyardError {
  if (isSwitchyardError(err)) return err;
  logger.error('gateway request failed', { err });
  return new SwitchyardError('GATEWAY_INTERNAL', 'Internal gateway error; retry, and report it if it persists.', {
    cause: err,
  });
}

/**
 * `{"jsonrpc":"2.0","id":<raw>,"error":{code,message,data?}}` as bytes. With `requestId` (the request's
 * id, rpc/request-trace.ts), `data` carries it as `request_id` beside the error's own details, so a
 * client can quote it; an origin's own error answer never passes through here.
 */
export function errorResponse(err: SwitchyardError, rawId: Buffer = NULL_ID, requestId?: string): Buffer {
  const error: { code: number; message: string; data?: unknown } = {
    code: err.spec.rpc ?? -32603,
    message: err.message,
  };
  if (requestId !== undefined) error.data = { ...(err.details as object | undefined), request_id: requestId };
  else if (err.details !== undefined) error.data = err.details;
  return Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":'),
    rawId,
    Buffer.from(`,"error":${JSON.stringify(error)}}`),
  ]);
}
