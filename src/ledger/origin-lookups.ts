/**
 * What the ledger asks a network's origins (SPEC §19), over the OriginCalls port (outside client
 * traffic: no health, routing or resend memory is involved), and how it reads the answers.
 *
 * - `blockTransactions`: a canonical block's transactions (`eth_getBlockByHash(hash, true)`: hash,
 *   sender, nonce, index), from the network's usable origins, the leader first, then by head — the
 *   first that has the block answers; undefined when none could.
 * - `lookup`: `eth_getTransactionByHash` for many hashes (LOOKUP_BATCH, 100, per request) from the first
 *   usable origin that answers: where each transaction is (a block, a mempool, or nowhere).
 * - `mempools`: the same lookup on every usable ("healthy") origin; per hash whether any has it, whether
 *   every one answered null, and where it is included if any origin says so.
 * - `nonceAt`: the sender's nonce at `latest` (`eth_getTransactionCount`), from the first that answers.
 * - `broadcast`: `eth_sendRawTransaction` to every usable origin at once; the origins that accepted
 *   (a result, or an error saying they already have it).
 * Failures of one origin are logged at debug and the next is asked; nothing here throws.
 */
import type { TrackedOrigin } from '../chain/tracker.js';
import type { Logger } from '../log.js';
import type { MethodCall, OriginCallAnswer, OriginCalls } from '../model/origin-calls.js';
import type { BlockTransaction } from './network-ledger.js';
import type { Inclusion } from './types.js';

export const LOOKUP_BATCH = 100;
/** Answers to eth_sendRawTransaction that mean the origin has the transaction already. */
const ALREADY_KNOWN = /already known|known transaction|already imported|already exists/i;

/** What the ledger reads of the chain tracker to choose origins. */
export interface LedgerOriginsChain {
  trackedOrigins(network: string): TrackedOrigin[];
  leader(network: string): TrackedOrigin | undefined;
}

/** Where one origin says a transaction is. */
export type Whereabouts =
  | { readonly kind: 'block'; readonly inclusion: Inclusion }
  | { readonly kind: 'mempool' }
  | { readonly kind: 'none' };

/** What every usable origin together says of one transaction. */
export interface MempoolVerdict {
  /** Included somewhere, as one origin says. */
  readonly inclusion: Inclusion | undefined;
  /** Some origin has it (in a block or its mempool). */
  readonly seen: boolean;
  /** Every usable origin answered, and every answer was null. */
  readonly absent: boolean;
}

export class LedgerOrigins {
  readonly #calls: OriginCalls;
  readonly #chain: LedgerOriginsChain;
  readonly #logger: Logger;

  constructor(calls: OriginCalls, chain: LedgerOriginsChain, logger: Logger) {
    this.#calls = calls;
    this.#chain = chain;
    this.#logger = logger;
  }

  /** The network's usable origins: the leader first, then by head, highest first. */
  usable(network: string): TrackedOrigin[] {
    const leader = this.#chain.leader(network);
    const usable = this.#chain.trackedOrigins(network).filter((entry) => entry.usable);
    usable.sort((a, b) => (b.state.head ?? -1) - (a.state.head ?? -1));
    if (leader === undefined || !leader.usable) return usable;
    const same = (entry: TrackedOrigin) => entry.pool.id === leader.pool.id && entry.origin.name === leader.origin.name;
    return [...usable.filter(same), ...usable.filter((entry) => !same(entry))];
  }

  async blockTransactions(network: string, hash: string): Promise<BlockTransaction[] | undefined> {
    for (const entry of this.usable(network)) {
      const answer = await this.#ask(entry, [['eth_getBlockByHash', [hash, true]]]);
      const block = answer?.[0];
      if (block === undefined || !('result' in block) || block.result === null) continue;
      const parsed = blockTransactionsOf(block.result, hash);
      if (parsed !== undefined) return parsed;
    }
    return undefined;
  }

  /**
   * Where each transaction is, from the first usable origin that answers (undefined: none did; a hash
   * the origin answered with an error is missing from the map).
   */
  async lookup(network: string, hashes: readonly string[]): Promise<Map<string, Whereabouts> | undefined> {
    const found = new Map<string, Whereabouts>();
    for (let i = 0; i < hashes.length; i += LOOKUP_BATCH) {
      const chunk = hashes.slice(i, i + LOOKUP_BATCH);
      let answered = false;
      for (const entry of this.usable(network)) {
        const answers = await this.#ask(
          entry,
          chunk.map((hash) => ['eth_getTransactionByHash', [hash]] as const),
        );
        if (answers === undefined) continue;
        chunk.forEach((hash, k) => {
          const where = whereaboutsOf(answers[k]);
          if (where !== undefined) found.set(hash, where);
        });
        answered = true;
        break;
      }
      if (!answered) return undefined;
    }
    return found;
  }

  /** What every usable origin says of each transaction (SPEC §19 `dropped`: "every healthy origin"). */
  async mempools(network: string, hashes: readonly string[]): Promise<Map<string, MempoolVerdict>> {
    const origins = this.usable(network);
    const verdicts = new Map<string, { inclusion?: Inclusion; seen: boolean; nulls: number }>();
    for (const hash of hashes) verdicts.set(hash, { seen: false, nulls: 0 });
    for (let i = 0; i < hashes.length; i += LOOKUP_BATCH) {
      const chunk = hashes.slice(i, i + LOOKUP_BATCH);
      const calls = chunk.map((hash) => ['eth_getTransactionByHash', [hash]] as const);
      const answers = await Promise.all(origins.map((entry) => this.#ask(entry, calls)));
      for (const perOrigin of answers) {
        if (perOrigin === undefined) continue;
        chunk.forEach((hash, k) => {
          const verdict = verdicts.get(hash) as { inclusion?: Inclusion; seen: boolean; nulls: number };
          const where = whereaboutsOf(perOrigin[k]);
          if (where === undefined) return;
          if (where.kind === 'none') verdict.nulls += 1;
          else verdict.seen = true;
          if (where.kind === 'block') verdict.inclusion ??= where.inclusion;
        });
      }
    }
    const out = new Map<string, MempoolVerdict>();
    for (const [hash, verdict] of verdicts) {
      const absent = origins.length > 0 && verdict.nulls === origins.length;
      out.set(hash, { inclusion: verdict.inclusion, seen: verdict.seen, absent });
    }
    return out;
  }

  async nonceAt(network: string, from: string): Promise<number | undefined> {
    for (const entry of this.usable(network)) {
      const answer = (await this.#ask(entry, [['eth_getTransactionCount', [from, 'latest']]]))?.[0];
      if (answer !== undefined && 'result' in answer && typeof answer.result === 'string') {
        const nonce = Number.parseInt(answer.result, 16);
        if (Number.isSafeInteger(nonce)) return nonce;
      }
    }
    return undefined;
  }

  /** Sends the raw transaction to every usable origin; the "pool/origin" names of those that took it. */
  async broadcast(network: string, raw: string): Promise<string[]> {
    const origins = this.usable(network);
    const answers = await Promise.all(origins.map((entry) => this.#ask(entry, [['eth_sendRawTransaction', [raw]]])));
    const took: string[] = [];
    answers.forEach((answers, i) => {
      const answer = answers?.[0];
      if (answer === undefined) return;
      const entry = origins[i] as TrackedOrigin;
      if ('result' in answer || ALREADY_KNOWN.test(errorMessage(answer.error))) {
        took.push(`${entry.pool.name}/${entry.origin.name}`);
      }
    });
    return took;
  }

  async #ask(entry: TrackedOrigin, calls: readonly MethodCall[]): Promise<OriginCallAnswer[] | undefined> {
    try {
      return await this.#calls.call(entry.origin, calls);
    } catch (err) {
      this.#logger.debug('ledger lookup failed on an origin', {
        pool: entry.pool.name,
        origin: entry.origin.name,
        method: calls[0]?.[0],
        reason: (err as Error).message,
      });
      return undefined;
    }
  }
}

function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}

const HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;

function quantity(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(value)) return undefined;
  const n = Number.parseInt(value, 16);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A block's transactions, when the answer is the block asked for with full transactions. */
export function blockTransactionsOf(result: unknown, hash: string): BlockTransaction[] | undefined {
  if (result === null || typeof result !== 'object') return undefined;
  const block = result as { hash?: unknown; transactions?: unknown };
  if (typeof block.hash !== 'string' || block.hash.toLowerCase() !== hash || !Array.isArray(block.transactions)) {
    return undefined;
  }
  const out: BlockTransaction[] = [];
  for (const [i, item] of block.transactions.entries()) {
    if (item === null || typeof item !== 'object') return undefined;
    const tx = item as Record<string, unknown>;
    const txHash = typeof tx.hash === 'string' ? tx.hash.toLowerCase() : '';
    const from = typeof tx.from === 'string' ? tx.from.toLowerCase() : '';
    const nonce = quantity(tx.nonce);
    if (!HASH.test(txHash) || !ADDRESS.test(from) || nonce === undefined) return undefined;
    out.push({ hash: txHash, from, nonce, index: quantity(tx.transactionIndex) ?? i });
  }
  return out;
}

/** Where an eth_getTransactionByHash answer says the transaction is; undefined for an error answer. */
export function whereaboutsOf(answer: OriginCallAnswer | undefined): Whereabouts | undefined {
  if (answer === undefined || !('result' in answer)) return undefined;
  if (answer.result === null || typeof answer.result !== 'object') return { kind: 'none' };
  const tx = answer.result as Record<string, unknown>;
  const number = quantity(tx.blockNumber);
  const blockHash = typeof tx.blockHash === 'string' ? tx.blockHash.toLowerCase() : undefined;
  if (number === undefined || blockHash === undefined || !HASH.test(blockHash)) return { kind: 'mempool' };
  return { kind: 'block', inclusion: { number, hash: blockHash, index: quantity(tx.transactionIndex) ?? 0 } };
}
