/**
 * What verified calls have proven about blocks, kept so the next call at the same block asks nothing more
 * (SPEC §18 costs: docs/verification.md): trusted headers, blocks' proven transactions and proven
 * receipts, each keyed by block hash, at most KEPT_BLOCKS of each (the oldest go first). An entry is
 * proven before it is kept, so it serves every later call and origin of the process.
 *
 * A header comes from the anchor's own header object when it hashes to the trusted hash (no origin
 * asked: the tracker's poll brought it), else from the attempt's origin (`eth_getBlockByNumber` /
 * `eth_getBlockByHash`, without transactions; a null answer is OriginRefused). Transactions come from the block with full transactions
 * (`eth_getBlockByHash(hash, true)`), receipts from `eth_getBlockReceipts(hash)`, both from the attempt's
 * origin and proven against the header (verify/ `verifyBlock`, `proveBlockReceipts`); an answer that does
 * not prove refutes, and the attempt's origin is the one that failed.
 */
import {
  type ProvenBlockReceipts,
  type ProvenTransaction,
  proveBlockReceipts,
  proveHeader,
  type TrustedHeader,
  VerificationError,
  verifyBlock,
  verifyHeader,
} from '../../../verify/index.js';
import type { BlockTarget } from './block-target.js';
import { type OriginAsk, OriginRefused } from './origin-ask.js';

export const KEPT_BLOCKS = 256;

/** A count-bounded map: the oldest entry goes first. */
class Kept<V> {
  readonly #map = new Map<string, V>();

  get(key: string): V | undefined {
    return this.#map.get(key);
  }

  set(key: string, value: V): V {
    this.#map.set(key, value);
    if (this.#map.size > KEPT_BLOCKS) this.#map.delete(this.#map.keys().next().value as string);
    return value;
  }
}

export class ProvenBlocks {
  readonly #headers = new Kept<TrustedHeader>();
  readonly #transactions = new Kept<readonly ProvenTransaction[]>();
  readonly #receipts = new Kept<ProvenBlockReceipts>();

  /** The target block's header, proven against its trusted (or named) hash. */
  async header(target: BlockTarget, ask: OriginAsk): Promise<TrustedHeader> {
    const hash = target.kind === 'trusted' ? target.block.hash : target.hash;
    const kept = this.#headers.get(hash);
    if (kept !== undefined) return kept;
    if (target.kind === 'trusted') {
      const number = BigInt(target.block.number);
      const own = target.block.header;
      if (own !== undefined) {
        const verified = await verifyHeader(own, { hash, number });
        if (verified.ok) return this.#headers.set(hash, verified.value);
      }
      const answer = await ask.call('eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      return this.#headers.set(
        hash,
        proveHeader(present(answer, 'eth_getBlockByNumber', `block ${number}`), { hash, number }),
      );
    }
    const answer = await ask.call('eth_getBlockByHash', [hash, false]);
    return this.#headers.set(hash, proveHeader(present(answer, 'eth_getBlockByHash', `block ${hash}`), { hash }));
  }

  /** A proven header already held for this hash (no origin asked). */
  known(hash: string): TrustedHeader | undefined {
    return this.#headers.get(hash);
  }

  /** The block's transactions, proven against its header's transactions root. */
  async transactions(header: TrustedHeader, ask: OriginAsk): Promise<readonly ProvenTransaction[]> {
    const kept = this.#transactions.get(header.hash);
    if (kept !== undefined) return kept;
    const answer = await ask.call('eth_getBlockByHash', [header.hash, true]);
    const verified = await verifyBlock(present(answer, 'eth_getBlockByHash', `block ${header.number}`), {
      hash: header.hash,
    });
    if (!verified.ok) throw new VerificationError(verified.failure);
    return this.#transactions.set(header.hash, verified.value.transactions ?? []);
  }

  /** The block's receipts, proven against its header's receipts root (with its transactions' fields). */
  async receipts(header: TrustedHeader, ask: OriginAsk): Promise<ProvenBlockReceipts> {
    const kept = this.#receipts.get(header.hash);
    if (kept !== undefined) return kept;
    const transactions = await this.transactions(header, ask);
    const answer = await ask.call('eth_getBlockReceipts', [header.hash]);
    if (!Array.isArray(answer)) {
      throw new VerificationError({ check: 'answer-shape', reason: 'eth_getBlockReceipts did not answer a list' });
    }
    return this.keepReceipts(await proveBlockReceipts(answer, header, transactions));
  }

  /** Receipts proven elsewhere (a client's eth_getBlockReceipts), kept for later calls. */
  keepReceipts(receipts: ProvenBlockReceipts): ProvenBlockReceipts {
    return this.#receipts.set(receipts.blockHash.toLowerCase(), receipts);
  }
}

/** `answer` unless the origin answered null: it has no such block, and cannot be checked at it. */
function present(answer: unknown, method: string, what: string): unknown {
  if (answer === null || answer === undefined) throw new OriginRefused(method, { message: `no ${what}` });
  return answer;
}
