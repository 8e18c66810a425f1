/**
 * What the response cache may keep, decided in two steps. Which methods are cacheable, and as which
 * kind, is `cache` in the method table (rpc/methods.ts); the rules per kind are here.
 *
 * `planRead` (before forwarding, from the request alone):
 *   - `eth_chainId`, `net_version`                       → kind `static`: a network's identity never changes.
 *   - `eth_getBlockByHash`                                → kind `block-hash`: a hash names one block's content.
 *   - `eth_getTransactionByHash`, `eth_getTransactionReceipt`
 *                                                         → kind `tx-hash`, but only kept when the answer
 *     places the transaction in a block at or below the finalized height. A transaction hash does not name a
 *     block: after a reorg the same transaction can be pending again, dropped, or mined in another block
 *     with another blockHash, blockNumber, index, gas used and logs. So neither answer is immutable until its
 *     block is final; pending transactions (blockNumber null) are never kept.
 *   - `eth_getBlockByNumber` with a hex number at or below the network's finalized height
 *                                                         → kind `block-number`. Tags (`latest`, `pending`,
 *     `safe`, `finalized`, `earliest`) are never cached: they move, or mean different blocks over time.
 *   - everything else: not cacheable.
 * `admit` (after the origin answered): only HTTP 200 answers whose JSON-RPC object has a non-null `result`
 * and no `error` are kept — never errors, never "not found (yet)" nulls — and only answers that are the
 * object asked for on the chain the tracker adopted (SPEC §20, so one bad origin cannot poison what
 * every client reads):
 *   - a block or transaction by hash: its `hash` is the hash asked for;
 *   - a receipt: its `transactionHash` is the hash asked for and its `blockHash` is the canonical
 *     chain's block at its `blockNumber`;
 *   - a block by number: its `hash` is the canonical chain's block at that height.
 * The canonical chain is the tracker's window of recent blocks (128, chain/canonical.ts): blocks by number
 * and receipts older than that are answered, not kept. `admit` also extracts the block height and hash an
 * entry depends on, so a reorg can invalidate it.
 *
 * The cache key is network + method + canonical params: the params re-serialised from their parsed form
 * (whitespace-free), with hashes and block numbers lower-cased, so `0xABC…` and `0xabc…` share an entry.
 */
import { type CacheKind, STANDARD_METHODS } from '../../rpc/methods.js';

export interface ReadPlan {
  readonly key: string;
  readonly network: string;
  readonly method: string;
  readonly kind: CacheKind;
  /** For `block-number`: the requested height. */
  readonly height?: bigint;
  /** For `block-hash` and `tx-hash`: the requested hash, lowercase. */
  readonly hash?: string;
}

/** The hash of the canonical block at a height, while the chain tracker's window holds it. */
export type CanonicalHashes = (network: string, height: number) => string | undefined;

/** What an admitted answer depends on, for reorg invalidation. */
export interface Admission {
  /** Height of the block the answer belongs to (absent for `static`). */
  readonly height?: bigint;
  /** Hash of that block, when the answer names it. */
  readonly blockHash?: string;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/**
 * The cache plan for a read, or undefined when it must go to an origin uncached. `finalized` is the
 * network's finalized height if known (blocks by number are only cacheable at or below it).
 */
export function planRead(
  network: string,
  method: string,
  params: unknown,
  finalized: bigint | undefined,
): ReadPlan | undefined {
  const list = params === undefined ? [] : params;
  if (!Array.isArray(list)) return undefined;
  const kind = STANDARD_METHODS[method]?.cache;
  switch (kind) {
    case 'static':
      if (list.length !== 0) return undefined;
      return { key: `${network}\u0000${method}\u0000[]`, network, method, kind };
    case 'block-hash': {
      const [hash, full] = list;
      if (list.length !== 2 || typeof hash !== 'string' || !HASH.test(hash) || typeof full !== 'boolean')
        return undefined;
      const asked = hash.toLowerCase();
      return { key: `${network}\u0000${method}\u0000["${asked}",${full}]`, network, method, kind, hash: asked };
    }
    case 'tx-hash': {
      const [hash] = list;
      if (list.length !== 1 || typeof hash !== 'string' || !HASH.test(hash)) return undefined;
      const asked = hash.toLowerCase();
      return { key: `${network}\u0000${method}\u0000["${asked}"]`, network, method, kind, hash: asked };
    }
    case 'block-number': {
      const [tag, full] = list;
      if (list.length !== 2 || typeof tag !== 'string' || !QUANTITY.test(tag) || typeof full !== 'boolean') {
        return undefined;
      }
      const height = BigInt(tag);
      if (finalized === undefined || height > finalized) return undefined;
      const canonical = `0x${height.toString(16)}`;
      return { key: `${network}\u0000${method}\u0000["${canonical}",${full}]`, network, method, kind, height };
    }
    default:
      return undefined;
  }
}

/** Whether a read's cacheability depends on knowing the network's finalized height (tags do not). */
export function needsFinality(method: string, params: unknown): boolean {
  const kind = STANDARD_METHODS[method]?.cache;
  if (kind === 'tx-hash') return true;
  if (kind !== 'block-number' || !Array.isArray(params)) return false;
  const tag: unknown = params[0];
  return typeof tag === 'string' && QUANTITY.test(tag);
}

/**
 * Decides whether an origin's answer to a planned read may be kept. `finalized` is read at admission
 * time: a transaction's block must be final by then. Without `canonical`, blocks by number and receipts
 * are never kept (nothing to check them against).
 */
export function admit(
  plan: ReadPlan,
  status: number,
  body: Buffer,
  finalized: bigint | undefined,
  canonical?: CanonicalHashes,
): Admission | undefined {
  if (status !== 200) return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return undefined;
  const object = answer as Record<string, unknown>;
  if ('error' in object || !('result' in object)) return undefined;
  const result = object.result;
  if (result === null || result === undefined) return undefined;
  switch (plan.kind) {
    case 'static':
      return typeof result === 'string' ? {} : undefined;
    case 'block-number': {
      const block = blockFields(result);
      // The origin must answer for the block asked, at or below finality now, and the chain's block.
      if (block === undefined || block.height !== plan.height) return undefined;
      if (finalized === undefined || block.height > finalized) return undefined;
      return isCanonical(plan.network, block, canonical) ? block : undefined;
    }
    case 'block-hash': {
      const block = blockFields(result);
      return block?.blockHash === plan.hash ? block : undefined;
    }
    case 'tx-hash': {
      if (typeof result !== 'object') return undefined;
      const tx = result as Record<string, unknown>;
      const height = quantity(tx.blockNumber);
      const blockHash = tx.blockHash;
      if (height === undefined || typeof blockHash !== 'string' || !HASH.test(blockHash)) return undefined;
      if (finalized === undefined || height > finalized) return undefined;
      const entry = { height, blockHash: blockHash.toLowerCase() };
      const receipt = plan.method === 'eth_getTransactionReceipt';
      if (lower(receipt ? tx.transactionHash : tx.hash) !== plan.hash) return undefined;
      return !receipt || isCanonical(plan.network, entry, canonical) ? entry : undefined;
    }
  }
}

function isCanonical(
  network: string,
  block: { height: bigint; blockHash: string },
  canonical: CanonicalHashes | undefined,
): boolean {
  return canonical !== undefined && canonical(network, Number(block.height)) === block.blockHash;
}

function lower(value: unknown): string | undefined {
  return typeof value === 'string' ? value.toLowerCase() : undefined;
}

function blockFields(result: unknown): { height: bigint; blockHash: string } | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const block = result as Record<string, unknown>;
  const height = quantity(block.number);
  if (height === undefined || typeof block.hash !== 'string' || !HASH.test(block.hash)) return undefined;
  return { height, blockHash: block.hash.toLowerCase() };
}

function quantity(value: unknown): bigint | undefined {
  return typeof value === 'string' && QUANTITY.test(value) ? BigInt(value) : undefined;
}
