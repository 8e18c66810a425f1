/**
 * One follower's round (replicator.ts runs one at a time per follower, every poll or when woken):
 * 1. read its latest block and pool; hand the transactions clients sent to it to the leader (signed
 *    bytes, nonce order, once per leader; then the leader mines them, leader-mining.ts); copy the
 *    leader's pending transactions into its pool, so every node's pending nonce counts them and none is
 *    lost with the leader;
 * 2. replay each leader block it lacks (replay.ts), behind its gate;
 * 3. when its latest block is not on the leader's chain, find the fork point and roll its blocks back
 *    (divergence.ts). Transactions of blocks the current leader had and took back (evm_revert) go with
 *    them; those of blocks only this node had (it led before a failover) go back to its pool and to the
 *    leader.
 * A follower that was lost (or demoted) refuses clients through its proxy until a round finds it in step.
 * A block whose replay keeps differing (the node's state was changed outside blocks, e.g. anvil_setBalance
 * sent to anvil's own port, past the proxy that refuses it) is retried every 5 s with a warning, and so is
 * a fork point not found within 1024 blocks; the follower stays behind meanwhile.
 */
import type { Logger } from '../log.js';
import { forkPoint, readBlocks, rollBack } from './divergence.js';
import type { NodeGate } from './node-proxy.js';
import { type NodeAnswer, NodeRefused, type NodeRpc, NodeUnreachable } from './node-rpc.js';
import {
  type ChainBlock,
  hashesOf,
  hex,
  type NodeHead,
  poolHashes,
  type RawTransactions,
  readBlock,
  replayBlock,
  sendAll,
  type TxPoolContent,
} from './replay.js';

const STUCK_RETRY_MS = 5000;

/** A devnet node as the replicator tracks it, whatever its role. */
export interface DevnetMember {
  readonly index: number;
  readonly rpc: NodeRpc;
  readonly gate: NodeGate;
  exited: boolean;
  /** The round in progress (followers only). */
  busy: Promise<void> | undefined;
  /** Its latest block as last seen. */
  head: NodeHead | undefined;
  inStep: boolean;
  /** When it last answered the replicator (ms since the epoch). */
  lastAnswer: number;
  /** Its own last answer failed (not a call to the leader made in its round). */
  unreachable: boolean;
  /** Since when its gate refuses clients (lost or demoted), until a round finds it in step. */
  refusingSince: number | undefined;
  /** A block whose replay kept failing, and when to try it again. */
  stuck: { hash: string; until: number } | undefined;
  lastError: string | undefined;
}

/** What a follower's round needs of the replicator, which keeps it current. */
export interface FollowerContext {
  readonly leader: DevnetMember;
  /** Bumped on every leader change: a round begun under another epoch stops. */
  readonly epoch: number;
  /** The leader's latest block as last seen; a round raises it when it sees further. */
  head: NodeHead;
  /** The leader's pool (hashes) at its last probe. */
  readonly leaderPool: readonly string[];
  readonly stopped: boolean;
  readonly raws: RawTransactions;
  readonly logger: Logger;
  /** Transactions the current leader holds or was handed. */
  readonly handed: Handed;
  readonly leaderBlocks: LeaderBlocks;
  /** The leader holds new pending transactions (leader-mining.ts mines them in automine mode). */
  minePending(): void;
}

/** Hashes of blocks seen on the leader, with the epoch (leader) they were seen under; the last 10 000. */
export class LeaderBlocks {
  static readonly MAX = 10_000;
  readonly #epochs = new Map<string, number>();

  seen(hash: string, epoch: number): void {
    this.#epochs.set(hash, epoch);
    if (this.#epochs.size > LeaderBlocks.MAX) this.#epochs.delete(this.#epochs.keys().next().value as string);
  }

  epochOf(hash: string): number | undefined {
    return this.#epochs.get(hash);
  }
}

/** A bounded set of transaction hashes (the oldest leave first past 100 000). */
export class Handed {
  static readonly MAX = 100_000;
  readonly #hashes = new Set<string>();

  has(hash: string): boolean {
    return this.#hashes.has(hash);
  }

  add(hash: string): void {
    this.#hashes.add(hash);
    if (this.#hashes.size > Handed.MAX) this.#hashes.delete(this.#hashes.values().next().value as string);
  }

  clear(): void {
    this.#hashes.clear();
  }
}

export function newMember(index: number, rpc: NodeRpc, gate: NodeGate): DevnetMember {
  return {
    index,
    rpc,
    gate,
    exited: false,
    busy: undefined,
    head: undefined,
    inStep: false,
    lastAnswer: Date.now(),
    unreachable: false,
    refusingSince: undefined,
    stuck: undefined,
    lastError: undefined,
  };
}

/** Its clients are answered 503 until a round finds it in step with the leader again. */
export function refuseClients(m: DevnetMember, why: string): void {
  if (m.refusingSince !== undefined) return;
  m.refusingSince = Date.now();
  m.inStep = false;
  m.gate.refuse(`devnet node ${m.rpc.name} is catching up with the chain (${why}); try another node`);
}

export async function followerRound(m: DevnetMember, chain: FollowerContext): Promise<void> {
  const epoch = chain.epoch;
  let answers: NodeAnswer[];
  try {
    answers = await m.rpc.batch([
      ['eth_getBlockByNumber', ['latest', false]],
      ['txpool_content', []],
    ]);
  } catch (err) {
    if (err instanceof NodeUnreachable) m.unreachable = true;
    throw err;
  }
  m.unreachable = false;
  m.lastAnswer = Date.now();
  const [latest, pool] = answers;
  if (!latest?.ok) throw latest?.error;
  if (!pool?.ok) throw pool?.error;
  const block = latest.result as NodeHead;
  const head = { number: Number(block.number), hash: block.hash };
  m.head = head;
  const pooled = hashesOf(pool.result as TxPoolContent);
  if (await handOver(m, chain, pooled)) chain.minePending();
  await takeLeaderPool(m, chain, pooled);
  if (epoch === chain.epoch) await catchUp(m, chain, head, epoch);
  m.lastError = undefined;
}

/**
 * Hands the transactions of a follower's pool (`pooled`, else read now) that the leader has not been
 * handed yet to the leader; true when the leader took at least one.
 */
export async function handOver(m: DevnetMember, chain: FollowerContext, pooled?: readonly string[]): Promise<boolean> {
  const fresh = (pooled ?? (await poolHashes(m.rpc))).filter((hash) => !chain.handed.has(hash));
  if (fresh.length === 0) return false;
  const leader = chain.leader;
  const txs = await chain.raws.fetch(m.rpc, fresh);
  let taken = false;
  for (const tx of txs) {
    try {
      await leader.rpc.call('eth_sendRawTransaction', [tx.raw]);
      taken = true;
    } catch (err) {
      if (err instanceof NodeUnreachable) return taken; // again in a later round, or to the next leader
      // Refused (already known, nonce too low: mined already; or a conflicting transaction won).
      chain.logger.debug('devnet: leader refused a forwarded transaction', { hash: tx.hash, from: m.rpc.name, err });
    }
    chain.handed.add(tx.hash);
  }
  return taken;
}

/** Copies the leader's pending transactions (as last probed) into a follower's pool (`pooled`, else read now). */
export async function takeLeaderPool(
  m: DevnetMember,
  chain: FollowerContext,
  pooled?: readonly string[],
): Promise<void> {
  if (chain.leaderPool.length === 0) return;
  const known = new Set(pooled ?? (await poolHashes(m.rpc)));
  const missing = chain.leaderPool.filter((hash) => !known.has(hash));
  if (missing.length > 0) await sendAll(m.rpc, await chain.raws.fetch(chain.leader.rpc, missing));
}

async function catchUp(m: DevnetMember, chain: FollowerContext, start: NodeHead, epoch: number): Promise<void> {
  const leader = chain.leader;
  let head = start;
  while (!chain.stopped && epoch === chain.epoch) {
    const target = chain.head;
    m.inStep = head.number === target.number && head.hash === target.hash;
    if (m.inStep) {
      if (m.refusingSince !== undefined) {
        m.gate.accept();
        chain.logger.info('devnet node caught up', {
          node: m.rpc.name,
          height: head.number,
          after_ms: Date.now() - m.refusingSince,
        });
        m.refusingSince = undefined;
      }
      return;
    }
    if (head.number < target.number) {
      const next = await readBlock(leader.rpc, head.number + 1, chain.raws);
      if (next === null) return; // the leader went back (evm_revert); its next probe says where
      chain.leaderBlocks.seen(next.hash, epoch);
      if (next.parentHash === head.hash) {
        if (!(await replay(m, chain, next))) return;
        head = { number: next.number, hash: next.hash };
        m.head = head;
        continue;
      }
    } else if (head.number > target.number) {
      const theirs = await leader.rpc.call<NodeHead | null>('eth_getBlockByNumber', [hex(head.number), false]);
      if (theirs?.hash === head.hash) {
        if (epoch === chain.epoch && head.number > chain.head.number) chain.head = head;
        continue;
      }
    }
    const rewound = await rewind(m, chain, head);
    if (rewound === undefined) return;
    head = rewound;
    m.head = head;
  }
}

async function replay(m: DevnetMember, chain: FollowerContext, block: ChainBlock): Promise<boolean> {
  if (m.stuck?.hash === block.hash && Date.now() < m.stuck.until) return false;
  const outcome = await m.gate.exclusive(() => replayBlock(m.rpc, block, chain.raws));
  if (outcome.ok) {
    m.stuck = undefined;
    if (outcome.retried) {
      chain.logger.debug('devnet: block replayed at a later try', {
        node: m.rpc.name,
        block: block.number,
        ...outcome.retried,
      });
    }
    return true;
  }
  m.stuck = { hash: block.hash, until: Date.now() + STUCK_RETRY_MS };
  chain.logger.warn('devnet: a replayed block differs from the leader’s', {
    node: m.rpc.name,
    block: block.number,
    leader_hash: block.hash,
    replayed_hash: outcome.minedHash,
    hint: "was its state changed through anvil's own port (anvil_setBalance, …)? retried every 5 s",
  });
  return false;
}

/** `m`'s latest block is not on the leader's chain. Returns m's head afterwards, or undefined (not now). */
async function rewind(m: DevnetMember, chain: FollowerContext, head: NodeHead): Promise<NodeHead | undefined> {
  if (m.stuck?.hash === head.hash && Date.now() < m.stuck.until) return undefined;
  const leader = chain.leader;
  const fork = await forkPoint(m.rpc, leader.rpc, Math.min(head.number, chain.head.number));
  if (fork === undefined) {
    chain.logger.error('devnet: a node shares no block with the leader in the last 1024', { node: m.rpc.name });
    m.stuck = { hash: head.hash, until: Date.now() + STUCK_RETRY_MS };
    return undefined;
  }
  const blocks = await readBlocks(m.rpc, fork.number + 1, head.number, chain.raws);
  // Blocks this leader had and took back (evm_revert) are gone with their transactions; the node's own
  // blocks (mined while it led, before a failover; or through anvil's port) keep theirs.
  const own = blocks.filter((block) => chain.leaderBlocks.epochOf(block.hash) !== chain.epoch);
  const txs = own.flatMap((block) => block.txs);
  await rollBack(m, fork, head.number, own);
  for (const tx of txs) {
    try {
      await leader.rpc.call('eth_sendRawTransaction', [tx.raw]);
    } catch (err) {
      if (!(err instanceof NodeRefused)) throw err;
    }
    chain.handed.add(tx.hash);
  }
  if (txs.length > 0) chain.minePending();
  chain.logger.info('devnet: blocks not on the chain were rolled back', {
    node: m.rpc.name,
    fork: fork.number,
    blocks: head.number - fork.number,
    taken_back_by_leader: blocks.length - own.length,
    transactions_handed_to_leader: txs.length,
  });
  return fork;
}
