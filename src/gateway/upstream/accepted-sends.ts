/**
 * The transaction ledger's seam in the gateway (SPEC §19): a Forwarder around the origin forwarder that
 * tells `AcceptedSends` (model/accepted-sends.ts) about every `eth_sendRawTransaction` an origin accepted
 * — answered with a `result` — whatever way it came (HTTP or WebSocket, alone or in a batch: a batch's
 * writes are forwarded one by one) and however the forwarder chose its origins. Nothing else changes:
 * other calls pass straight through (no extra promise), and the answer goes back as it came; telling the
 * ledger only queues (the ledger decodes and writes in the background).
 */
import type { AcceptedSends } from '../../model/accepted-sends.js';
import type { BatchRequest, BatchResult, Forwarder, UpstreamReply, UpstreamRequest } from '../rpc/forwarder.js';

const SEND_METHOD = 'eth_sendRawTransaction';

export class AcceptedSendForwarder implements Forwarder {
  readonly #inner: Forwarder;
  readonly #sends: AcceptedSends;
  readonly #now: () => number;
  readonly cached?: (request: UpstreamRequest) => UpstreamReply | undefined;
  readonly forwardBatch?: (request: BatchRequest) => Promise<BatchResult>;
  readonly assertRoutable?: (network: string, pools: readonly string[]) => void;

  constructor(inner: Forwarder, sends: AcceptedSends, now: () => number) {
    this.#inner = inner;
    this.#sends = sends;
    this.#now = now;
    // Only what the inner forwarder has: the handler looks for each of these.
    if (inner.cached !== undefined) this.cached = inner.cached.bind(inner);
    if (inner.forwardBatch !== undefined) this.forwardBatch = inner.forwardBatch.bind(inner);
    if (inner.assertRoutable !== undefined) this.assertRoutable = inner.assertRoutable.bind(inner);
  }

  forward(request: UpstreamRequest): Promise<UpstreamReply> {
    if (request.call.method !== SEND_METHOD) return this.#inner.forward(request);
    return this.#inner.forward(request).then((reply) => {
      if (reply.outcome?.key === 'result') this.#accepted(request, reply);
      return reply;
    });
  }

  #accepted(request: UpstreamRequest, reply: UpstreamReply): void {
    const params = request.call.params;
    const raw = Array.isArray(params) ? params[0] : undefined;
    if (typeof raw !== 'string') return;
    this.#sends.accepted({
      network: request.network,
      raw,
      keyId: request.sender?.keyId,
      client: request.sender?.address ?? request.client ?? 'unknown',
      origins: [`${reply.pool}/${reply.origin}`],
      at: this.#now(),
    });
  }
}
