/**
 * One JSON-RPC call the hub makes upstream (eth_getLogs, filter polling) through the gateway's Forwarder,
 * so it gets routing, failover, the gateway's own upstream ids and the response cache like a client call.
 * The request is built as a client body and read by the client's parser (rpc/request.ts `ownCall`).
 * Resolves the `result`; rejects on an `error` answer (UpstreamCallError) or any forwarding failure.
 */
import type { NetworkConfig } from '../../config/schema.js';
import type { ClientSignal, Forwarder } from '../rpc/forwarder.js';
import { ownCall } from '../rpc/request.js';

export class UpstreamCallError extends Error {
  override readonly name = 'UpstreamCallError';
  readonly rpcCode: unknown;

  constructor(method: string, error: unknown) {
    const message =
      error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string'
        ? (error as { message: string }).message
        : 'error answer';
    super(`${method}: ${message}`);
    this.rpcCode = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  }
}

export interface UpstreamCaller {
  call(network: string, method: string, params: readonly unknown[], signal?: ClientSignal): Promise<unknown>;
}

/** `networks`: the networks in force at each call (a config reload may change their pools). */
export function upstreamCaller(
  forwarder: Forwarder,
  networks: () => Readonly<Record<string, Pick<NetworkConfig, 'pools'>>>,
): UpstreamCaller {
  return {
    async call(network, method, params, signal) {
      const reply = await forwarder.forward({
        network,
        pools: networks()[network]?.pools ?? [],
        call: ownCall(method, params),
        signal,
      });
      const answer = JSON.parse(reply.body.toString('utf8')) as { result?: unknown; error?: unknown };
      if (answer.error !== undefined) throw new UpstreamCallError(method, answer.error);
      return answer.result;
    },
  };
}
