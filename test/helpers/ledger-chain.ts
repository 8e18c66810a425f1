/**
 * A scripted chain and scripted origins for the transaction ledger without a gateway or a node
 * (src/ledger/ledger.test.ts, bench/ledger.ts): the chain plays the tracker — its listeners get the heads,
 * reorgs and gaps a test emits — with two usable origins; the origins answer the ledger's calls from
 * what the test put in `blocks` and `seen`, and count every call by method.
 */
import type { TrackedOrigin } from '../../src/chain/tracker.js';
import type { BlockHead, ChainListener } from '../../src/chain/types.js';
import type { LedgerChain } from '../../src/ledger/follower.js';
import type { MethodCall, OriginCallAnswer, OriginCalls } from '../../src/model/origin-calls.js';
import type { Origin, Pool } from '../../src/model/pool.js';

export const blockHash = (n: number, branch = 'a'): string =>
  `0x${branch.repeat(8)}${n.toString(16).padStart(56, '0')}`;

/** A transaction of a scripted block. */
export interface ScriptedTx {
  hash: string;
  from: string;
  nonce: number;
}

type Whereabouts = { blockNumber: string; blockHash: string } | 'mempool' | null;

export class ScriptedOrigins implements OriginCalls {
  readonly calls = new Map<string, number>();
  /** block hash → its transactions; answered as JSON text is parsed, as an origin's would be. */
  readonly blocks = new Map<string, string>();
  /** origin name → tx hash → where it is (`null` or missing: nowhere). */
  readonly seen = new Map<string, Map<string, Whereabouts>>();
  /** Origins that do not answer (the call rejects). */
  readonly failing = new Set<string>();
  /** What eth_getTransactionCount answers (the sender's nonce at latest). */
  nonce = 0;

  setBlock(hash: string, txs: readonly ScriptedTx[]): void {
    const transactions = txs.map((tx, i) => ({
      hash: tx.hash,
      from: tx.from,
      nonce: `0x${tx.nonce.toString(16)}`,
      transactionIndex: `0x${i.toString(16)}`,
    }));
    this.blocks.set(hash, JSON.stringify({ hash, transactions }));
  }

  async call(origin: Origin, calls: readonly MethodCall[]): Promise<OriginCallAnswer[]> {
    if (this.failing.has(origin.name)) throw new Error('connection refused');
    return calls.map(([method, params]) => {
      this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
      if (method === 'eth_getBlockByHash') {
        const block = this.blocks.get(params[0] as string);
        return { result: block === undefined ? null : JSON.parse(block) };
      }
      if (method === 'eth_getTransactionByHash') {
        const where = this.seen.get(origin.name)?.get(params[0] as string) ?? null;
        if (where === null) return { result: null };
        if (where === 'mempool') return { result: { hash: params[0], blockNumber: null, blockHash: null } };
        return { result: { hash: params[0], ...where, transactionIndex: '0x0' } };
      }
      if (method === 'eth_getTransactionCount') return { result: `0x${this.nonce.toString(16)}` };
      return { result: params[0] };
    });
  }
}

export class ScriptedChain implements LedgerChain {
  readonly listeners = new Set<ChainListener>();
  head: { number: number; hash: string } | undefined;
  finalizedBlock: { number: number } | undefined;
  readonly origins: TrackedOrigin[] = ['o0', 'o1'].map((name) => ({
    pool: { id: 'pool', name: 'p' } as Pool,
    origin: { name } as Origin,
    state: { head: 0, hash: undefined, earliest: 0, syncing: false, refused: false },
    usable: true,
    pushing: false,
  }));

  constructor(readonly network = 'sepolia') {}

  addListener(listener: ChainListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  trackedOrigins(): TrackedOrigin[] {
    return this.origins;
  }
  leader(): TrackedOrigin | undefined {
    return this.origins[0];
  }
  canonicalHead(): { number: number; hash: string } | undefined {
    return this.head;
  }
  canonical(): Array<{ number: number; hash: string }> {
    return this.head === undefined ? [] : [this.head];
  }
  finalized(): { number: number } | undefined {
    return this.finalizedBlock;
  }
  touch(): void {}

  emitHead(number: number, branch = 'a'): void {
    this.head = { number, hash: blockHash(number, branch) };
    const block: BlockHead = { ...this.head, parentHash: blockHash(number - 1, branch), timestamp: number, header: {} };
    for (const listener of this.listeners) listener.head?.(this.network, block);
  }

  emitReorg(forkPoint: number): void {
    for (const listener of this.listeners)
      listener.reorg?.(this.network, { forkPoint, removed: [], beyondWindow: false });
  }

  emitGap(from: number, to: number): void {
    for (const listener of this.listeners) listener.gap?.(this.network, from, to);
  }
}
