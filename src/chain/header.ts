/**
 * A block header as origins answer `eth_getBlockByNumber(…, false)` and push it in newHeads,
 * read into the tracker's BlockHead. A header needs a quantity `number`, 32-byte `hash` and `parentHash`
 * and a quantity `timestamp`; anything else (null, a pending block without hash, a truncated object) is
 * not a header. Hashes are kept lowercase so they compare as strings.
 */
import type { BlockHead } from './types.js';

const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;

export function parseHeader(value: unknown): BlockHead | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const header = value as Record<string, unknown>;
  const { number, hash, parentHash, timestamp } = header;
  if (typeof number !== 'string' || !QUANTITY.test(number)) return undefined;
  if (typeof hash !== 'string' || !HASH.test(hash)) return undefined;
  if (typeof parentHash !== 'string' || !HASH.test(parentHash)) return undefined;
  if (typeof timestamp !== 'string' || !QUANTITY.test(timestamp)) return undefined;
  const height = Number.parseInt(number, 16);
  if (!Number.isSafeInteger(height)) return undefined;
  return {
    number: height,
    hash: hash.toLowerCase(),
    parentHash: parentHash.toLowerCase(),
    timestamp: Number.parseInt(timestamp, 16),
    header,
  };
}
