/**
 * What every call of one request shares as the handler (handler.ts) runs it — the network and its route,
 * who asked, their signal, session, key and the request's trace — and the forwarder's request built from
 * it for one call. A write names its sender (the key's id and the client's address) for the transaction
 * ledger (upstream/accepted-sends.ts); reads carry none.
 */
import type { GatewayKeyRecord } from '../../model/gateway-keys.js';
import type { ClientSignal, UpstreamRequest } from './forwarder.js';
import { STANDARD_METHODS } from './methods.js';
import type { NetworkRoute } from './network-routes.js';
import type { RpcCall } from './request.js';
import type { RequestTrace } from './request-trace.js';
import type { LocalMethods } from './session.js';

export interface CallContext {
  network: string;
  route: NetworkRoute;
  /** Who asked (gateway API key, else remote address): rate limit and stream slots. */
  client: string;
  /** The client's address (the same as `client` without a key). */
  address: string;
  /** The client's signal (http1/server/server-exchange.ts makes it on first use). */
  signal: () => ClientSignal | undefined;
  local: LocalMethods | undefined; // the session's (session.ts), as is `stream`
  stream: boolean;
  /** The gateway key the client is, whose usage each call counts to. */
  key: GatewayKeyRecord | undefined;
  /** The request's id, log lines, and what the access log writes (request-trace.ts). */
  trace: RequestTrace | undefined;
}

/** The forwarder's request for a call (the gateway's client signal is a small object: made here). */
export function upstreamRequest(call: RpcCall, context: CallContext, stream: boolean): UpstreamRequest {
  return {
    network: context.network,
    pools: context.route.pools,
    call,
    stream: stream && context.stream,
    client: context.client,
    signal: context.signal(),
    trace: context.trace,
    sender:
      STANDARD_METHODS[call.method]?.write === true ? { keyId: context.key?.id, address: context.address } : undefined,
  };
}
