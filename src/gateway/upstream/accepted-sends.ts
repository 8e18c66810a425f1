/**
 * The transaction ledger's seam in the gateway (SPEC §19). The origin forwarder hands every answer of its
 * eth_sendRawTransaction hook here; an accepted one carries `acceptedBy` (hooks/eth-send-raw-transaction.ts:
 * every origin that accepted the send, settled once all it went to have answered), whether it went to one
 * origin or to all, alone, in a batch (whose writes go one by one) or over WebSocket. It is told to the
 * ledger's AcceptedSends port once per client send, with those origins; `at` is when the client's answer
 * came. Only queues (the ledger decodes and writes in the background); the answer goes on as it came.
 */
import type { AcceptedSends } from '../../model/accepted-sends.js';
import type { UpstreamReply, UpstreamRequest } from '../rpc/forwarder.js';

export function tellLedger(
  sends: AcceptedSends,
  request: UpstreamRequest,
  reply: UpstreamReply,
  at: number,
): UpstreamReply {
  const raw = Array.isArray(request.call.params) ? request.call.params[0] : undefined;
  if (reply.acceptedBy === undefined || typeof raw !== 'string') return reply;
  void reply.acceptedBy.then((origins) =>
    sends.accepted({
      network: request.network,
      raw,
      keyId: request.sender?.keyId,
      client: request.sender?.address ?? request.client ?? 'unknown',
      origins,
      at,
    }),
  );
  return reply;
}
