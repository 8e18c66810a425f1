/**
 * The chain tracker's ChainSource (src/chain/types.ts) over origin clients (origin-clients.ts): the same
 * address model (path, query, Basic auth from user:password), origin headers and outbound connect guard
 * every forwarded call uses. The gateway gives it clients of its own, CHAIN_CONNECTIONS_PER_ORIGIN (2)
 * keep-alive sockets per origin (gateway.ts), so the tracker never waits behind client calls.
 *
 * - `block(pool, origin, which)` sends `eth_getBlockByNumber(<"latest" | "finalized" | hex>, false)`;
 *   `syncing` sends `eth_syncing`. The JSON-RPC id is the string "switchyard-chain", so an origin's own
 *   logs (and tests) can tell the tracker's requests from forwarded calls.
 * - Each request is bounded by `timeoutMs` (the gateway uses min(gateway.request_timeout, 5 s)), from
 *   dispatch to the whole answer; it may be replayed once on a fresh connection after a stale keep-alive
 *   socket (a read).
 * - A null result or a JSON-RPC error answer (e.g. a chain without the `finalized` tag) is "no such
 *   block": undefined. A failed exchange, an HTTP status that means failure (5xx, 401/403/407/408/429),
 *   an answer that is not JSON-RPC, or a result that is not a header of the block asked for rejects with
 *   an AttemptFailure (attempt-failure.ts), whose message names no address.
 * - Nothing here reports to health or routing: the tracker's requests are not client traffic.
 */
import { parseHeader } from '../../chain/header.js';
import type { BlockHead, ChainSource } from '../../chain/types.js';
import type { OriginCallAnswer } from '../../model/origin-calls.js';
import type { Origin, Pool } from '../../model/pool.js';
import { AttemptFailure } from './attempt-failure.js';
import type { OriginClients } from './origin-clients.js';
import { originJson, rpcOutcome } from './origin-json.js';

/** Upper bound of one tracker request (ms); the gateway takes the lower of this and request_timeout. */
export const CHAIN_REQUEST_TIMEOUT_MS = 5_000;
export const CHAIN_REQUEST_ID = 'switchyard-chain';
/** Sockets per origin for the tracker's requests (a poll, a back-fill of up to 8 blocks, a finality fetch). */
export const CHAIN_CONNECTIONS_PER_ORIGIN = 2;

export class GatewayChainSource implements ChainSource {
  readonly #clients: OriginClients;
  readonly #timeoutMs: number;

  constructor(options: { clients: OriginClients; timeoutMs: number }) {
    this.#clients = options.clients;
    this.#timeoutMs = options.timeoutMs;
  }

  async block(_pool: Pool, origin: Origin, which: 'latest' | 'finalized' | number): Promise<BlockHead | undefined> {
    const tag = typeof which === 'number' ? `0x${which.toString(16)}` : which;
    const answer = await this.#call(origin, 'eth_getBlockByNumber', `["${tag}",false]`);
    if (!('result' in answer) || answer.result === null) return undefined;
    const header = parseHeader(answer.result);
    if (header === undefined) throw new AttemptFailure('garbled', 'eth_getBlockByNumber answered no block header');
    if (typeof which === 'number' && header.number !== which) {
      throw new AttemptFailure('garbled', `asked for block ${which}, got block ${header.number}`);
    }
    return header;
  }

  async syncing(_pool: Pool, origin: Origin): Promise<boolean> {
    const answer = await this.#call(origin, 'eth_syncing', '[]');
    if (!('result' in answer)) throw new AttemptFailure('garbled', 'eth_syncing answered an error');
    return answer.result !== false;
  }

  async #call(origin: Origin, method: string, params: string): Promise<OriginCallAnswer> {
    const body = Buffer.from(`{"jsonrpc":"2.0","id":"${CHAIN_REQUEST_ID}","method":"${method}","params":${params}}`);
    const parsed = await originJson(this.#clients, origin, body, this.#timeoutMs, true);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new AttemptFailure('garbled', 'the answer is not a JSON-RPC response');
    }
    const outcome = rpcOutcome(parsed as Record<string, unknown>);
    if (outcome === undefined) throw new AttemptFailure('garbled', 'the answer has neither result nor error');
    return outcome;
  }
}
