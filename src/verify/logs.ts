/**
 * `eth_getLogs` answers checked two ways:
 *
 * - `checkLogBlocks` (integrity): every log names a block number and hash, and where the trusted chain
 *   has a hash at that height, the log's block hash is it. Heights the map does not hold are returned
 *   (`unknownBlocks`) for the caller to anchor, never passed as proven.
 * - `proveLogs` (proofs): for each block given with its proven receipts (receipts.ts), the answer's logs
 *   of that block are exactly the filter's matches among the proven logs, in order, with the same
 *   address, topics, data, transaction and log index — nothing altered, added or left out. Which blocks
 *   to give is the caller's choice: those the answer names, plus those whose trusted `logsBloom` may
 *   match the filter (`bloomMayMatch`), so an omitted block cannot hide a match.
 */
import { Bloom } from '@ethereumjs/vm';
import { dataBytes, type Hex, sameHex, sameQuantity } from './encoding.js';
import { refute, settle, type Verified } from './failure.js';
import type { ProvenBlockReceipts } from './receipts.js';
import { logShape, parseShape, type RpcLog } from './rpc-shapes.js';

/** The address and topics parts of an eth_getLogs filter (block range and blockHash are the caller's). */
export interface LogSelector {
  readonly address?: string | readonly string[] | null;
  /** Per position: null = any, a hash, or a list of alternatives. */
  readonly topics?: readonly (string | readonly string[] | null)[] | null;
}

export interface LogBlockCheck {
  /** Heights the logs name that the trusted map does not hold. */
  readonly unknownBlocks: readonly bigint[];
}

function parseLogs(answer: unknown): RpcLog[] {
  if (!Array.isArray(answer)) return refute('answer-shape', 'the logs answer is not a list');
  return answer.map((log, index) => parseShape(logShape, log, `log ${index}`));
}

/** Checks that each log's block is the trusted block at its height (integrity mode). */
export function checkLogBlocks(
  answer: unknown,
  trusted: ReadonlyMap<bigint, string>,
): Promise<Verified<LogBlockCheck>> {
  return settle(() => {
    const unknown = new Set<bigint>();
    for (const [index, log] of parseLogs(answer).entries()) {
      if (log.blockHash === undefined || log.blockNumber === undefined) {
        refute('log', `log ${index} names no block`, { field: `${index}` });
      }
      const number = BigInt(log.blockNumber);
      const hash = trusted.get(number);
      if (hash === undefined) unknown.add(number);
      else if (!sameHex(hash, log.blockHash)) {
        refute('log', `log ${index} names block ${log.blockHash} at ${number}, the trusted block is ${hash}`, {
          block: number,
        });
      }
    }
    return { unknownBlocks: [...unknown].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
  });
}

function matchesOne(value: string, wanted: string | readonly string[] | null | undefined): boolean {
  if (wanted === null || wanted === undefined) return true;
  if (typeof wanted === 'string') return sameHex(value, wanted);
  return wanted.length === 0 || wanted.some((one) => sameHex(value, one));
}

/** Whether a log matches the filter's address and topics (eth_getLogs semantics). */
export function logMatchesFilter(log: Pick<RpcLog, 'address' | 'topics'>, filter: LogSelector): boolean {
  if (!matchesOne(log.address, filter.address)) return false;
  const topics = filter.topics ?? [];
  if (topics.length > log.topics.length) return false;
  return topics.every((wanted, position) => matchesOne(log.topics[position] as string, wanted));
}

/** Whether a block whose header has `logsBloom` may hold a log matching the filter (false = surely not). */
export function bloomMayMatch(logsBloom: string, filter: LogSelector): boolean {
  const bloom = new Bloom(dataBytes(logsBloom));
  const anyOf = (wanted: string | readonly string[] | null | undefined) => {
    if (wanted === null || wanted === undefined) return true;
    const options = typeof wanted === 'string' ? [wanted] : wanted;
    return options.length === 0 || options.some((one) => bloom.check(dataBytes(one)));
  };
  return anyOf(filter.address) && (filter.topics ?? []).every(anyOf);
}

interface IndexedLog {
  readonly log: RpcLog;
  readonly transactionHash: Hex;
  readonly transactionIndex: number;
  readonly logIndex: number;
}

function matchingProvenLogs(block: ProvenBlockReceipts, filter: LogSelector): IndexedLog[] {
  return block.receipts.flatMap((receipt) =>
    receipt.answer.logs
      .map((log, offset) => ({
        log,
        transactionHash: receipt.transactionHash,
        transactionIndex: receipt.transactionIndex,
        logIndex: receipt.firstLogIndex + offset,
      }))
      .filter(({ log }) => logMatchesFilter(log, filter)),
  );
}

function sameLog(said: RpcLog, proven: IndexedLog, block: ProvenBlockReceipts): boolean {
  return (
    sameHex(said.address, proven.log.address) &&
    said.topics.length === proven.log.topics.length &&
    said.topics.every((topic, i) => sameHex(topic, proven.log.topics[i] as string)) &&
    sameHex(said.data, proven.log.data) &&
    said.transactionHash !== undefined &&
    sameHex(said.transactionHash, proven.transactionHash) &&
    said.transactionIndex !== undefined &&
    sameQuantity(said.transactionIndex, BigInt(proven.transactionIndex)) &&
    said.logIndex !== undefined &&
    sameQuantity(said.logIndex, BigInt(proven.logIndex)) &&
    said.blockNumber !== undefined &&
    sameQuantity(said.blockNumber, block.blockNumber) &&
    said.removed !== true
  );
}

/**
 * Proves an eth_getLogs answer over the given blocks (keyed by block hash, lower case): in each, the
 * answer's logs are exactly the filter's matches among its proven receipts. Logs naming a block not
 * given refute: the caller gives every block the answer names.
 */
export function proveLogs(
  answer: unknown,
  filter: LogSelector,
  blocks: ReadonlyMap<string, ProvenBlockReceipts>,
): Promise<Verified<{ readonly logs: number }>> {
  return settle(() => {
    const logs = parseLogs(answer);
    const byBlock = new Map<string, RpcLog[]>();
    for (const [index, log] of logs.entries()) {
      const key = log.blockHash?.toLowerCase();
      if (key === undefined || !blocks.has(key)) refute('log', `log ${index} names a block not proven here (${key})`);
      byBlock.set(key, [...(byBlock.get(key) ?? []), log]);
    }
    for (const [key, block] of blocks) {
      const said = byBlock.get(key) ?? [];
      const expected = matchingProvenLogs(block, filter);
      if (said.length !== expected.length) {
        refute('log', `block ${block.blockNumber} has ${expected.length} matching logs, the answer ${said.length}`, {
          block: block.blockNumber,
        });
      }
      said.forEach((log, i) => {
        if (!sameLog(log, expected[i] as IndexedLog, block)) {
          refute('log', `log ${i} of block ${block.blockNumber} differs from the proven receipts`, {
            block: block.blockNumber,
          });
        }
      });
    }
    return { logs: logs.length };
  });
}
