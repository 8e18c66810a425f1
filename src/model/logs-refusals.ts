/**
 * Origins' "your eth_getLogs range is too large" answers (SPEC §17 `logs_split`), as one table: the
 * JSON-RPC errors with which a node or a provider refuses a log query for its block span or for how many
 * logs it would return. With `networks.{name}.logs_split` on, a chunk answered with one of these is
 * halved and asked again (gateway/upstream/hooks/eth-get-logs.ts); without it, such an answer passes to
 * the client as always.
 *
 * Matched on the message only (a case-insensitive substring): the codes vary from one origin to the next
 * (-32005, -32602, -32600, -32614, -32701, 35, …) and each code means other things too. A rate-limit
 * answer (model/rate-limit-answers.ts) never gets this far: the engine treats it as throttling first.
 * Where each row comes from: docs/routing.md "The refusal table" (clients' sources, providers' docs).
 */

import { type MessageRow, rowForMessage } from './message-rows.js';

export type LogsRefusal = MessageRow;

export const LOGS_REFUSALS: readonly LogsRefusal[] = [
  // geth eth/filters/filter.go (`--rpc.rangelimit`): "exceed maximum block range %d" (-32602)
  { origin: 'geth', message: 'exceed maximum block range' },
  // reth crates/rpc/rpc/src/eth/filter.rs EthFilterError: QueryExceedsMaxBlocks / QueryExceedsMaxResults
  { origin: 'reth', message: 'query exceeds max block range' },
  { origin: 'reth', message: 'query exceeds max results' },
  // besu EthGetLogs (`--rpc-max-logs-range`): "Requested range exceeds maximum range limit" (-32005)
  { origin: 'besu', message: 'requested range exceeds maximum' },
  // Infura eth_getLogs constraints: "query returned more than 10000 results. Try with this block range …" (-32005)
  { origin: 'Infura', message: 'query returned more than' },
  // Alchemy eth_getLogs: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range …"
  { origin: 'Alchemy', message: 'log response size exceeded' },
  // QuickNode: "eth_getLogs is limited to a 10,000 range" (-32614); 1RPC: "… is limited to 0 - 50 blocks range"
  { origin: 'QuickNode', message: 'eth_getlogs is limited to' },
  // Ankr: "block range is too wide" (-32600)
  { origin: 'Ankr', message: 'block range is too wide' },
  // Chainstack: "Block range limit exceeded."
  { origin: 'Chainstack', message: 'block range limit exceeded' },
  // Base / Coinbase and OP Stack nodes: "block range too large", "Block range is too large"
  { origin: 'Base', message: 'block range too large' },
  { origin: 'Optimism', message: 'block range is too large' },
  // Coinbase Developer Platform: "please limit the query to at most N blocks"
  { origin: 'Coinbase', message: 'please limit the query to at most' },
  // dRPC free tier: "ranges over 10000 blocks are not supported on freetier" (code 35)
  { origin: 'dRPC', message: 'blocks are not supported' },
  // Arbitrum Nitro: "logs matched by query exceeds limit of N"
  { origin: 'Arbitrum', message: 'logs matched by query exceeds limit' },
  // Avalanche (coreth): "requested too many blocks from N to M, maximum is set to K"
  { origin: 'Avalanche', message: 'requested too many blocks' },
  // thirdweb: "Maximum allowed number of requested blocks is N"
  { origin: 'thirdweb', message: 'maximum allowed number of requested blocks' },
];

/** The table's row an origin's JSON-RPC error to eth_getLogs matches, if any. */
export function logsRefusal(error: { message?: unknown }): LogsRefusal | undefined {
  return rowForMessage(LOGS_REFUSALS, error.message);
}
