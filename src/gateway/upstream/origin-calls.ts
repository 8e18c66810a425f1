/**
 * OriginCalls (model/origin-calls.ts) over origin clients: JSON-RPC calls to one origin outside client
 * traffic — the transaction ledger's block and mempool lookups, nonce reads and rebroadcasts (SPEC §19).
 * The same address model, headers and outbound connect guard as forwarded calls, over clients of their
 * own (`LEDGER_CONNECTIONS_PER_ORIGIN`, 2 keep-alive sockets per origin), so they never queue behind
 * client calls. Several calls go as one batch with ids "switchyard-ledger-<i>", matched back by id.
 *
 * - Each exchange (origin-json.ts) is bounded by `timeoutMs` (min(gateway.request_timeout, 5 s)); one that
 *   only reads may be replayed once on a fresh connection after a stale keep-alive socket; one holding a
 *   write (eth_sendRawTransaction) never is.
 * - A failed exchange, an HTTP status that means failure (5xx, 401/403/407/408/429), or an answer that is
 *   not JSON-RPC for these calls rejects with an AttemptFailure, whose message names no address.
 * - Nothing here reports to health or routing: these calls are not client traffic.
 */
import type { Config } from '../../config/schema.js';
import type { BufferPool } from '../../http1/index.js';
import type { MethodCall, OriginCallAnswer, OriginCalls } from '../../model/origin-calls.js';
import type { Origin, PoolDirectory } from '../../model/pool.js';
import type { OutboundPolicy } from '../../outbound/policy.js';
import { AttemptFailure } from './attempt-failure.js';
import { CHAIN_REQUEST_TIMEOUT_MS } from './chain-source.js';
import { OriginClients } from './origin-clients.js';
import { originJson, rpcOutcome } from './origin-json.js';

/** Sockets per origin for the ledger's calls (a block fetch and a mempool check at once). */
export const LEDGER_CONNECTIONS_PER_ORIGIN = 2;
const ID_PREFIX = 'switchyard-ledger-';
const WRITES = new Set(['eth_sendRawTransaction']);

export class GatewayOriginCalls implements OriginCalls {
  readonly #clients: OriginClients;
  readonly #timeoutMs: number;

  constructor(options: { clients: OriginClients; timeoutMs: number }) {
    this.#clients = options.clients;
    this.#timeoutMs = options.timeoutMs;
  }

  async call(origin: Origin, calls: readonly MethodCall[]): Promise<OriginCallAnswer[]> {
    if (calls.length === 0) return [];
    const requests = calls.map(([method, params], i) => ({
      jsonrpc: '2.0',
      id: `${ID_PREFIX}${i}`,
      method,
      params,
    }));
    const body = Buffer.from(JSON.stringify(requests.length === 1 ? requests[0] : requests));
    const replayable = !calls.some(([method]) => WRITES.has(method));
    const parsed = await originJson(this.#clients, origin, body, this.#timeoutMs, replayable);
    const answers = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Map<string, OriginCallAnswer>();
    for (const answer of answers) {
      if (answer === null || typeof answer !== 'object') continue;
      const fields = answer as Record<string, unknown>;
      const outcome = rpcOutcome(fields);
      if (typeof fields.id === 'string' && outcome !== undefined) byId.set(fields.id, outcome);
    }
    return calls.map((_, i) => {
      const answer = byId.get(`${ID_PREFIX}${i}`);
      if (answer === undefined) throw new AttemptFailure('garbled', 'the answer misses a call of the batch');
      return answer;
    });
  }
}

/**
 * The ledger's origin calls for the routing account's origins (one process: beside the gateway; with
 * workers: in the control process). `close` stops following the directory and closes the sockets.
 */
export function buildOriginCalls(parts: {
  config: Readonly<Config>;
  directory: PoolDirectory;
  outbound: OutboundPolicy;
  buffers: BufferPool;
}): { calls: OriginCalls; close(): Promise<void> } {
  const { config, directory, outbound } = parts;
  const timeoutMs = Math.min(config.gateway.request_timeout, CHAIN_REQUEST_TIMEOUT_MS);
  const clients = new OriginClients({
    connectionsPerOrigin: LEDGER_CONNECTIONS_PER_ORIGIN,
    connectTimeoutMs: timeoutMs,
    guard: outbound.connectGuard(outbound.rulesFor(config.account_id)),
    buffers: parts.buffers,
  });
  const unsubscribe = directory.onChange(() => clients.prune(directory.allPools().flatMap((pool) => pool.origins)));
  return {
    calls: new GatewayOriginCalls({ clients, timeoutMs }),
    close: async () => {
      unsubscribe();
      await clients.close();
    },
  };
}
