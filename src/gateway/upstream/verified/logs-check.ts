/**
 * `eth_getLogs` answers checked (SPEC §18), the origin's answer passed on byte for byte:
 * - `integrity`: every log names the trusted block at its height (verify/ `checkLogBlocks`; the anchor may
 *   ask origins for a height nobody reported). The call's range was asked up to the trusted tip at most
 *   (block-target.ts), so an honest answer names no block above it.
 * - `proofs` (answered `proof`): also, per block, the logs are exactly the filter's matches among the
 *   block's receipts proven against its receipts root (verify/ `proveLogs`) — nothing altered, added or
 *   left out — for every block a log names and every block of the range whose trusted `logsBloom` may
 *   match the filter (an origin that leaves a block's logs out is caught there). A range wider than
 *   MAX_PROVEN_RANGE blocks is not scanned that way: its answer is checked as with `integrity`, and says
 *   `integrity`. A `blockHash` filter is one block: the one whose header hashes to that hash.
 * At most MAX_LOG_BLOCKS blocks are anchored or proven per call; an answer naming more cannot be checked
 * (Unanchored: -32050 names the limit).
 */
import type { TrustedBlock } from '../../../chain/types.js';
import {
  bloomMayMatch,
  checkLogBlocks,
  type LogSelector,
  type ProvenBlockReceipts,
  proveLogs,
} from '../../../verify/index.js';
import type { UpstreamReply } from '../../rpc/forwarder.js';
import { answered, type CheckContext, proven, Unanchored } from './check-context.js';

export const MAX_LOG_BLOCKS = 128;
export const MAX_PROVEN_RANGE = 128;

interface Filter {
  readonly fromBlock?: string;
  readonly toBlock?: string;
  readonly blockHash?: string;
  readonly address?: string | string[] | null;
  readonly topics?: (string | string[] | null)[] | null;
}

export async function checkLogs(context: CheckContext): Promise<UpstreamReply> {
  const { reply, value } = await answered(context);
  if (!Array.isArray(value)) return reply;
  const filter = (context.params[0] ?? {}) as Filter;
  const named = await namedBlocks(context, value, filter);
  const hashes = new Map([...named].map(([number, block]) => [BigInt(number), block.hash]));
  proven(await checkLogBlocks(value, hashes));
  if (context.mode !== 'proofs') return { ...reply, verified: 'integrity' };
  const blocks = await provenRange(context, filter, named);
  if (blocks === undefined) return { ...reply, verified: 'integrity' };
  const selector: LogSelector = { address: filter.address ?? null, topics: filter.topics ?? null };
  proven(await proveLogs(value, selector, blocks));
  return { ...reply, verified: context.level };
}

/** The trusted block at each height a log names (a `blockHash` filter: that block). */
async function namedBlocks(context: CheckContext, logs: unknown[], filter: Filter): Promise<Map<number, TrustedBlock>> {
  const out = new Map<number, TrustedBlock>();
  if (filter.blockHash !== undefined) {
    const header = await context.blocks.header({ kind: 'hash', hash: filter.blockHash.toLowerCase() }, context.ask);
    out.set(Number(header.number), { number: Number(header.number), hash: header.hash.toLowerCase() });
    return out;
  }
  const heights = new Set<number>();
  for (const log of logs) {
    const number = (log as { blockNumber?: unknown } | null)?.blockNumber;
    if (typeof number === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(number)) heights.add(Number(number));
  }
  if (heights.size > MAX_LOG_BLOCKS) throw new Unanchored(`more than ${MAX_LOG_BLOCKS} blocks in one answer`);
  for (const number of heights) out.set(number, await anchored(context, number));
  return out;
}

async function anchored(context: CheckContext, number: number): Promise<TrustedBlock> {
  const block = await context.chain.anchor(context.network, number);
  if (block === undefined) throw new Unanchored(`block ${number}`);
  return block;
}

/**
 * The proven receipts of each block to prove (keyed by hash): the named ones and those of the range whose
 * bloom may match; undefined when the range is too wide to scan.
 */
async function provenRange(
  context: CheckContext,
  filter: Filter,
  named: ReadonlyMap<number, TrustedBlock>,
): Promise<Map<string, ProvenBlockReceipts> | undefined> {
  const selector: LogSelector = { address: filter.address ?? null, topics: filter.topics ?? null };
  const chosen = new Map(named);
  if (filter.blockHash === undefined) {
    const from = Number(filter.fromBlock);
    const to = Number(filter.toBlock);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to - from + 1 > MAX_PROVEN_RANGE) return undefined;
    for (let number = from; number <= to; number += 1) {
      if (chosen.has(number)) continue;
      const block = await anchored(context, number);
      const header = await context.blocks.header({ kind: 'trusted', block }, context.ask);
      if (bloomMayMatch(header.logsBloom, selector)) chosen.set(number, block);
    }
  }
  const out = new Map<string, ProvenBlockReceipts>();
  for (const block of chosen.values()) {
    const header = await context.blocks.header({ kind: 'trusted', block }, context.ask);
    out.set(block.hash, await context.blocks.receipts(header, context.ask));
  }
  return out;
}
