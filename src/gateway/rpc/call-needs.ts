/**
 * What a call needs from an origin's chain (SPEC §9), from the method table (methods.ts `chain`,
 * `blockParams`, `filterParam`) and the call's own params — read by chain-aware routing
 * (routing/chain-order.ts) and the eth_getLogs range guard (logs-range.ts):
 *   - a block parameter that is a number, `earliest` (0) or `{blockNumber}` pins the call to that block;
 *   - a block hash or `{blockHash}` makes it a lookup by hash, like the by-hash methods;
 *   - a `latest`/`pending`/`safe`/`finalized` tag, or no block parameter at all, makes it head-relative;
 *   - eth_getLogs / eth_newFilter: `blockHash` is a lookup by hash; otherwise fromBlock..toBlock (absent
 *     = `latest`), tags resolved to the network head — unknown head: head-relative;
 *   - `chain: 'none'` methods (chain id, client version, signing, writes) need nothing.
 * Params were checked before (params.ts); anything unexpected here falls back to head-relative.
 */
import type { CallNeeds, ChainView } from '../../chain/types.js';
import { STANDARD_METHODS } from './methods.js';

const HEAD: CallNeeds = { kind: 'head' };
const HASH: CallNeeds = { kind: 'hash' };
const NONE: CallNeeds = { kind: 'none' };
const HASH_TEXT = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;

/** A block parameter as routing sees it: a number, the head, or a hash. */
type BlockRef = number | 'head' | 'hash';

/**
 * What the call needs. The network head (to resolve tags in an eth_getLogs range) is asked of `chain` only
 * for such ranges: the usual call costs one table lookup.
 */
export function callNeeds(
  method: string,
  params: unknown,
  chain: Pick<ChainView, 'networkHead'> | undefined,
  network: string,
): CallNeeds {
  const spec = STANDARD_METHODS[method];
  if (spec === undefined) return HEAD;
  if (spec.chain === 'none') return NONE;
  if (spec.chain === 'hash') return HASH;
  if (spec.filterParam) {
    return filterNeeds(Array.isArray(params) ? params[0] : undefined, chain?.networkHead(network));
  }
  const blocks = spec.blockParams;
  if (blocks === undefined || blocks.length === 0 || !Array.isArray(params)) return HEAD;
  const ref = blockRef(params[(blocks[0] as { index: number }).index]);
  if (ref === 'hash') return HASH;
  if (ref === 'head') return HEAD;
  return { kind: 'block', from: ref, to: ref };
}

/**
 * The block range of an eth_getLogs / eth_newFilter filter object: numbers as given, tags (and absent
 * bounds, which mean `latest`) resolved to `networkHead`; undefined for a `blockHash` filter, or when a
 * tag needs the head and it is not known.
 */
export function filterRange(
  filter: unknown,
  networkHead: number | undefined,
): { from: number; to: number } | undefined {
  if (filter === null || typeof filter !== 'object') return undefined;
  const { fromBlock, toBlock, blockHash } = filter as Record<string, unknown>;
  if (blockHash !== undefined) return undefined;
  const from = resolve(blockRef(fromBlock ?? 'latest'), networkHead);
  const to = resolve(blockRef(toBlock ?? 'latest'), networkHead);
  return from === undefined || to === undefined ? undefined : { from, to };
}

function filterNeeds(filter: unknown, networkHead: number | undefined): CallNeeds {
  if (filter !== null && typeof filter === 'object' && (filter as { blockHash?: unknown }).blockHash !== undefined) {
    return HASH;
  }
  const range = filterRange(filter, networkHead);
  if (range === undefined) return HEAD;
  // A reversed range is the origin's to refuse; routing asks for both ends.
  return { kind: 'block', from: Math.min(range.from, range.to), to: Math.max(range.from, range.to) };
}

function resolve(ref: BlockRef, networkHead: number | undefined): number | undefined {
  if (ref === 'head') return networkHead;
  if (ref === 'hash') return undefined;
  return ref;
}

function blockRef(value: unknown): BlockRef {
  if (typeof value === 'string') {
    if (value === 'latest') return 'head';
    if (value === 'earliest') return 0;
    if (HASH_TEXT.test(value)) return 'hash';
    if (QUANTITY.test(value)) return number(value);
    return 'head';
  }
  if (value !== null && typeof value === 'object') {
    const { blockHash, blockNumber } = value as { blockHash?: unknown; blockNumber?: unknown };
    if (typeof blockHash === 'string') return 'hash';
    if (typeof blockNumber === 'string' && QUANTITY.test(blockNumber)) return number(blockNumber);
  }
  return 'head';
}

/** A hex quantity as a number; past 2^53 (no chain is that high) it saturates, which still routes sanely. */
function number(hex: string): number {
  const n = Number.parseInt(hex.slice(2), 16);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** Whether a call is one of the client's pending-state reads that follow its own last write (SPEC §9). */
export function followsWrites(method: string, params: unknown): boolean {
  const spec = STANDARD_METHODS[method];
  const rule = spec?.readYourWrites;
  if (rule === undefined) return false;
  if (rule === 'always') return true;
  const index = spec?.blockParams?.[0]?.index;
  return index !== undefined && Array.isArray(params) && params[index] === 'pending';
}
