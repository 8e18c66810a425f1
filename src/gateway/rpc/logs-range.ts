/**
 * The eth_getLogs range guard (SPEC §9): `networks.{name}.max_logs_block_range` (default 10 000; null =
 * off) bounds the blocks one eth_getLogs or eth_newFilter may span, counted as `toBlock − fromBlock + 1`
 * on the request's own values — tags and absent bounds resolved to the network head, nothing clamped. A
 * wider range is LOGS_RANGE_TOO_LARGE (HTTP 200, -32005) naming the limit and how to split the query,
 * before any upstream call. A `blockHash` filter spans one block; a range whose tag cannot be resolved
 * (no head known yet) and a reversed range are left to the origin.
 */
import type { ChainView } from '../../chain/types.js';
import { SwitchyardError } from '../../errors/base.js';
import { filterRange } from './call-needs.js';
import { STANDARD_METHODS } from './methods.js';

export function logsRangeRefusal(
  network: string,
  method: string,
  params: unknown,
  limit: number | null,
  chain: Pick<ChainView, 'networkHead'> | undefined,
): SwitchyardError | undefined {
  if (limit === null || STANDARD_METHODS[method]?.filterParam !== true || !Array.isArray(params)) return undefined;
  // The network head (a clock read) is asked only for the calls the guard applies to.
  const range = filterRange(params[0], chain?.networkHead(network));
  if (range === undefined) return undefined;
  const blocks = range.to - range.from + 1;
  if (blocks <= limit) return undefined;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const firstEnd = range.from + limit - 1;
  return new SwitchyardError(
    'LOGS_RANGE_TOO_LARGE',
    `${method} range ${hex(range.from)}..${hex(range.to)} spans ${blocks} blocks; ${network} allows at most ` +
      `${limit} per query (networks.${network}.max_logs_block_range). Split it into ranges of at most ${limit} ` +
      `blocks, e.g. fromBlock ${hex(range.from)} toBlock ${hex(firstEnd)}, then fromBlock ${hex(firstEnd + 1)} onwards.`,
    { details: { method, from_block: hex(range.from), to_block: hex(range.to), blocks, limit } },
  );
}
