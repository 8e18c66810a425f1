/**
 * What a persistent connection (WebSocket, gateway/ws/) hands the RpcHandler besides the body: methods
 * it answers itself (`LocalMethods`: eth_subscribe, eth_unsubscribe) and whether answers must be whole.
 * A local call skips the method policy's "needs WebSocket" rule, but a network's `deny_methods` still
 * refuses it; its params are the local method's to check; it is never forwarded.
 */
import type { BatchAnswer } from './batch-response.js';
import type { MethodPolicy } from './method-policy.js';
import type { RpcCall } from './request.js';

/** Methods answered by the caller's own connection instead of an origin. */
export interface LocalMethods {
  has(method: string): boolean;
  /**
   * The call's `result` as JSON bytes (a promise when it must wait, e.g. a logs subscription's start), or
   * throws (or rejects with) a SwitchyardError: its error answer.
   */
  answer(network: string, call: RpcCall): Buffer | Promise<Buffer>;
}

export interface RpcSession {
  local?: LocalMethods;
  /** Default true (HTTP): a large single answer may stream. False: every answer whole (a WebSocket message). */
  stream?: boolean;
}

const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT = Buffer.from(',"result":');
const END = Buffer.from('}');

/**
 * The local call's answer (undefined for a notification, whose call still takes effect), at once or as a
 * promise; an error it throws or rejects with becomes `failed(err)`.
 */
export function localAnswer(
  call: RpcCall,
  network: string,
  policy: MethodPolicy,
  local: LocalMethods,
  failed: (err: unknown) => BatchAnswer,
): BatchAnswer | Promise<BatchAnswer> {
  const wrap = (bytes: Buffer): BatchAnswer =>
    call.id === undefined ? undefined : { body: Buffer.concat([HEAD, call.idBytes, RESULT, bytes, END]) };
  try {
    const denied = policy.denied(call.method);
    if (denied !== undefined) throw denied;
    const result = local.answer(network, call);
    return result instanceof Promise ? result.then(wrap, failed) : wrap(result);
  } catch (err) {
    return failed(err);
  }
}
