/**
 * The cache's seam into the gateway: a `Forwarder` that wraps the origin forwarder (gateway.ts
 * `serveGateway` builds it when `gateway.cache_max_bytes` > 0). For each call with an id:
 *   not cacheable (policy.ts), or its element has members beyond jsonrpc/id/method/params
 *                             → the inner forwarder, untouched (same signal, same retries);
 *   cached                    → the stored UpstreamReply (body + id span), no upstream call — but only
 *                               while the network has a routable pool: with every pool disabled or
 *                               unhealthy a hit answers 503 NO_HEALTHY_ORIGIN like any call (SPEC §2);
 *   otherwise                 → one shared upstream call per key (coalescing), stored when admitted.
 * The handler splices each client's own id into whichever reply it gets, so cached and coalesced
 * answers carry the right id without any JSON work. A shared call is not tied to the client that
 * started it (no client abort signal): other clients may be waiting on it.
 *
 * Finality for blocks by number comes from the chain tracker (chain-finality.ts): it fetches the
 * network's finalized block from a usable origin while the network is in use; nothing here polls. So do
 * the canonical hashes an answer must match to be kept (cacheability.ts).
 */
import type { Logger } from '../../../log.js';
import type { MetricsRegistry } from '../../../metrics/registry.js';
import type {
  BatchOutcome,
  BatchRequest,
  BatchResult,
  Forwarder,
  UpstreamReply,
  UpstreamRequest,
} from '../../rpc/forwarder.js';
import type { RpcCall } from '../../rpc/request.js';
import { type ChainBlocks, finalityFromChain } from './chain-finality.js';
import type { FinalityTracker } from './finality.js';
import { ResponseCache } from './response-cache.js';

export interface CachingForwarderOptions {
  maxBytes: number;
  /** The gateway's chain tracker: where finalized blocks come from. */
  chain: ChainBlocks;
  logger: Logger;
  metrics?: MetricsRegistry;
}

export class CachingForwarder implements Forwarder {
  readonly cache: ResponseCache<UpstreamReply>;
  readonly finality: FinalityTracker;
  readonly #inner: Forwarder;
  readonly #closeFinality: () => void;

  constructor(inner: Forwarder, options: CachingForwarderOptions) {
    this.#inner = inner;
    const fed = finalityFromChain(options.chain, options.logger);
    this.finality = fed.finality;
    this.#closeFinality = () => fed.close();
    this.cache = new ResponseCache<UpstreamReply>({
      maxBytes: options.maxBytes,
      finality: this.finality,
      canonical: (network, height) => options.chain.canonicalHash(network, height),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  }

  /** The origin forwarder's (a cached answer keeps what verification proved of it: `verified`). */
  verifyMode(network: string, method: string): ReturnType<NonNullable<Forwarder['verifyMode']>> {
    return this.#inner.verifyMode?.(network, method) ?? { mode: 'off', alone: false };
  }

  cached(request: UpstreamRequest): UpstreamReply | undefined {
    const { call } = request;
    if (call.id === undefined) return undefined;
    const plan = this.#plan(request.network, call);
    if (plan === undefined) return undefined;
    this.#inner.assertRoutable?.(request.network, request.pools);
    return this.cache.lookup(plan);
  }

  forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const { call } = request;
    if (call.id === undefined) return this.#inner.forward(request);
    const plan = this.#plan(request.network, call);
    if (plan === undefined) return this.#inner.forward(request);
    try {
      this.#inner.assertRoutable?.(request.network, request.pools);
    } catch (err) {
      return Promise.reject(err);
    }
    const hit = this.cache.lookup(plan);
    if (hit !== undefined) return Promise.resolve(hit);
    // Not tied to the client's signal (others may wait on it), but routed for it: the first client's
    // key steers it (hash steering, read-your-writes), which is as good as any for the clients that join.
    const shared = { network: request.network, pools: request.pools, call, client: request.client };
    return this.cache.read(plan, () => this.#inner.forward(shared)).then((result) => result.answer);
  }

  /**
   * A batch's read-only calls: the cacheable ones are left to the handler's per-call path (undefined:
   * hits, coalescing and storing as for single calls); the rest go to the origins as one batch.
   */
  async forwardBatch(request: BatchRequest): Promise<BatchResult> {
    const { calls, network } = request;
    const inner = this.#inner.forwardBatch?.bind(this.#inner);
    if (inner === undefined) return { outcomes: calls.map(() => undefined) };
    // Mostly every call of a batch is one the cache does not keep: then no array is made here. Each call
    // is planned once: those before the first cacheable one are known to go upstream.
    let first = 0;
    while (first < calls.length && !this.#cacheable(network, calls[first] as RpcCall)) first += 1;
    if (first === calls.length) return inner(request);
    const rest = Array.from({ length: first }, (_, i) => i);
    for (let i = first + 1; i < calls.length; i += 1) if (!this.#cacheable(network, calls[i] as RpcCall)) rest.push(i);
    const outcomes: BatchOutcome[] = calls.map(() => undefined);
    if (rest.length === 0) return { outcomes };
    // Only some calls go upstream: the client's body cannot go as it is.
    const answered = await inner({ ...request, calls: rest.map((i) => calls[i] as RpcCall), asIs: undefined });
    rest.forEach((index, k) => {
      outcomes[index] = answered.outcomes[k];
    });
    return { outcomes };
  }

  /** A call with an id that the cache keeps (hits, coalescing and storing: the handler's per-call path). */
  #cacheable(network: string, call: RpcCall): boolean {
    return call.id !== undefined && this.#plan(network, call) !== undefined;
  }

  /**
   * How the cache treats a call; undefined: not at all. A call whose element carries members beyond the
   * four of JSON-RPC bypasses it: a shared upstream call sends the first caller's bytes, and a stored
   * answer was given to other bytes, so neither may answer it.
   */
  #plan(network: string, call: RpcCall): ReturnType<ResponseCache<UpstreamReply>['plan']> {
    return call.extraMembers ? undefined : this.cache.plan(network, call.method, call.params);
  }

  close(): void {
    this.#closeFinality();
  }
}
