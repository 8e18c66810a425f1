/**
 * Replaying one block of the devnet's chain on another anvil node so that the node produces the very same
 * block (same hash). Checked on anvil 1.7.1: two nodes with the same genesis (`--timestamp`), `--order fifo`
 * and mining off produce identical blocks when given the same transactions in the same order and mined
 * with `evm_mine_detailed [{ timestamp }]` (the block's own timestamp; anvil accepts a timestamp equal to the
 * parent's and refuses a lower one). The base fee is set too (anvil_setNextBlockBaseFeePerGas): anvil
 * derives it from the last block it mined, and anvil_rollback does not rewind that, so after any rollback
 * the next block's base fee would differ. The rest of the header (gas limit, prevrandao, coinbase, blob
 * gas) follows from the parent.
 *
 * The target may hold transactions of its own (clients sent them to it; the replicator hands them to the
 * leader): "extras". They must not end up in the replayed block, and must not be lost. The replay runs
 * behind the node's gate (node-proxy.ts: no client request reaches the node meanwhile), and:
 * 1. reads the pool (txpool_content, pending and queued) and keeps every transaction's signed bytes;
 * 2. empties it (anvil_dropAllTransactions: anvil_dropTransaction cannot drop a queued transaction and
 *    drops a pending one's successors too) and sends the block's transactions one by one in block order
 *    (`--order fifo` mines them in arrival order);
 * 3. mines with the block's timestamp (evm_mine_detailed, which answers the mined block) and puts the
 *    extras back (eth_sendRawTransaction);
 * 4. compares the mined block's hash with the block's. On a mismatch the block is undone (anvil_rollback 1;
 *    its transactions leave the node with it, so they are sent back to the pool at once). A block that
 *    held a transaction it should not (sent to anvil's own port, past the gate) is tried again, up to 3
 *    times; the block's transactions in the block's order with another hash means the node's state differs
 *    (changed outside blocks), which no retry mends: reported to the caller.
 */
import { NodeRefused, type NodeRpc } from './node-rpc.js';

export interface ChainBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  readonly timestamp: number;
  /** Hex; set on the target before mining (see the header). */
  readonly baseFeePerGas: string | undefined;
  /** Block order, with each transaction's signed bytes. */
  readonly txs: readonly PooledTx[];
}

export interface NodeHead {
  readonly number: number;
  readonly hash: string;
}

export interface PooledTx {
  readonly hash: string;
  readonly raw: string;
}

/** `retried`: the first try differed; `unexpected` of its transactions were not the block's. */
export type ReplayOutcome = { ok: true; retried?: { unexpected: number } } | { ok: false; minedHash: string };

/** evm_mine_detailed answers the mined blocks with full transactions. */
interface MinedBlock {
  number: string;
  hash: string;
  transactions: Array<{ hash: string }>;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  baseFeePerGas?: string;
  transactions: string[];
}

/** Signed transaction bytes by hash (immutable facts, so never stale); the most recent 20 000. */
export class RawTransactions {
  static readonly MAX = 20_000;
  readonly #raws = new Map<string, string>();

  get(hash: string): string | undefined {
    return this.#raws.get(hash);
  }

  set(hash: string, raw: string): void {
    if (this.#raws.has(hash)) return;
    this.#raws.set(hash, raw);
    if (this.#raws.size > RawTransactions.MAX) this.#raws.delete(this.#raws.keys().next().value as string);
  }

  /** The bytes of `hashes` (in their order), asking `node` for those not known; unknown ones are left out. */
  async fetch(node: NodeRpc, hashes: readonly string[]): Promise<PooledTx[]> {
    const missing = hashes.filter((hash) => !this.#raws.has(hash));
    const answers = await node.batch(missing.map((hash) => ['eth_getRawTransactionByHash', [hash]] as const));
    for (const [i, answer] of answers.entries()) {
      if (answer.ok && typeof answer.result === 'string') this.set(missing[i] as string, answer.result);
    }
    return hashes.flatMap((hash) => {
      const raw = this.#raws.get(hash);
      return raw === undefined ? [] : [{ hash, raw }];
    });
  }
}

/** Block `n` (or the latest) of `node` with its transactions' bytes; null when the node has no such block. */
export async function readBlock(
  node: NodeRpc,
  n: number | 'latest',
  raws: RawTransactions,
): Promise<ChainBlock | null> {
  const block = await node.call<RpcBlock | null>('eth_getBlockByNumber', [typeof n === 'number' ? hex(n) : n, false]);
  if (block === null) return null;
  const txs = await raws.fetch(node, block.transactions);
  if (txs.length !== block.transactions.length) throw new NodeRefused('eth_getRawTransactionByHash', {});
  return {
    number: Number(block.number),
    hash: block.hash,
    parentHash: block.parentHash,
    timestamp: Number(block.timestamp),
    baseFeePerGas: block.baseFeePerGas,
    txs,
  };
}

/** The hashes of a node's pool (pending, then queued), per sender in nonce order. */
export async function poolHashes(node: NodeRpc): Promise<string[]> {
  return hashesOf(await node.call<TxPoolContent>('txpool_content'));
}

export type TxPoolContent = Record<'pending' | 'queued', Record<string, Record<string, { hash: string }>> | undefined>;

export function hashesOf(content: TxPoolContent): string[] {
  const hashes: string[] = [];
  for (const part of [content.pending, content.queued]) {
    for (const byNonce of Object.values(part ?? {})) {
      const nonces = Object.keys(byNonce).sort((a, b) => Number(a) - Number(b));
      for (const nonce of nonces) hashes.push((byNonce[nonce] as { hash: string }).hash);
    }
  }
  return hashes;
}

const ATTEMPTS = 3;

/**
 * Mines `block` on `target`, whose latest block must be the block's parent. Returns whether the result
 * is identical; on `ok: false` the target is back at the parent. Throws when the target stops answering.
 * Run it behind the node's gate (node-proxy.ts): its pool is emptied for a moment.
 */
export async function replayBlock(target: NodeRpc, block: ChainBlock, raws: RawTransactions): Promise<ReplayOutcome> {
  const inBlock = new Set(block.txs.map((tx) => tx.hash));
  let unexpected = 0;
  let minedHash = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const hashes = await poolHashes(target);
    const pool = await raws.fetch(target, hashes);
    // Every transaction taken out must be put back: no bytes, no emptying.
    if (pool.length !== hashes.length)
      throw new NodeRefused('eth_getRawTransactionByHash', { message: 'pool changed' });
    const extras = pool.filter((tx) => !inBlock.has(tx.hash));
    const baseFee =
      block.baseFeePerGas === undefined ? [] : [['anvil_setNextBlockBaseFeePerGas', [block.baseFeePerGas]] as const];
    for (const answer of await target.batch([...baseFee, ['anvil_dropAllTransactions', []]])) {
      if (!answer.ok) throw answer.error;
    }
    let mined: MinedBlock | undefined;
    try {
      for (const tx of block.txs) {
        try {
          await target.call('eth_sendRawTransaction', [tx.raw]);
        } catch (err) {
          // Refused: the mined block's hash tells whether it mattered.
          if (!(err instanceof NodeRefused)) throw err;
        }
      }
      mined = (await target.call<MinedBlock[]>('evm_mine_detailed', [{ timestamp: block.timestamp }]))[0];
    } finally {
      await sendAll(target, extras);
    }
    if (mined === undefined || Number(mined.number) !== block.number) {
      throw new NodeRefused('evm_mine_detailed', { message: `block ${block.number} was not mined` });
    }
    if (mined.hash === block.hash) return attempt === 0 ? { ok: true } : { ok: true, retried: { unexpected } };
    // Undo it; the transactions it held leave the node with it, so they go straight back to the pool.
    minedHash = mined.hash;
    const minedTxs = mined.transactions.map((tx) => tx.hash);
    const strays = minedTxs.filter((hash) => !inBlock.has(hash)).length;
    const back = await raws.fetch(target, minedTxs);
    await target.call('anvil_rollback', [1]);
    await sendAll(target, back);
    unexpected += strays;
    // The block's transactions in the block's order and nothing else, yet another hash: the node's state
    // differs from the leader's (changed outside blocks); trying again cannot help.
    if (strays === 0) break;
  }
  return { ok: false, minedHash };
}

/** Sends signed transactions, ignoring refusals (already known, nonce too low: nothing to keep). */
export async function sendAll(target: NodeRpc, txs: readonly PooledTx[]): Promise<void> {
  await target.batch(txs.map((tx) => ['eth_sendRawTransaction', [tx.raw]] as const));
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
