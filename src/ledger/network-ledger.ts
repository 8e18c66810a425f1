/**
 * What one network's follower keeps in memory (SPEC §19): the records it follows, indexed so that the
 * work per new block is proportional to that block's transactions, never to the ledger's size.
 *
 * - by hash (every followed record), and pending records by (sender, nonce): a block's transaction finds
 *   the record it includes and the pending records it replaces in two map lookups;
 * - pending records in the order they were followed: past `max_pending` the oldest leave first;
 * - included records by block number, with the numbers in ascending order: finality takes the lowest
 *   buckets, a reorg the highest — each record is touched once when it moves;
 * - pending records' mempool checks (dropped detection) in a queue by due time: due times are
 *   `now + step` with one step per network, so the queue stays in order; a rescheduled record's old entry
 *   is skipped when met (its `checkAt` moved).
 * Pure and synchronous: the follower (follower.ts) decides what the matches mean and writes them.
 */
import type { Followed, Inclusion } from './types.js';

/** A transaction of a block, as its full-transaction form names it. */
export interface BlockTransaction {
  readonly hash: string;
  readonly from: string;
  readonly nonce: number;
  readonly index: number;
}

/** What a block means for the records followed. */
export interface BlockMatches {
  readonly included: Array<{ record: Followed; inclusion: Inclusion }>;
  readonly replaced: Array<{ record: Followed; by: string }>;
}

interface MempoolCheck {
  readonly record: Followed;
  readonly due: number;
}

export class NetworkLedger {
  readonly #byHash = new Map<string, Followed>();
  readonly #bySender = new Map<string, Followed[]>();
  readonly #pending = new Map<string, Followed>();
  readonly #included = new Map<number, Followed[]>();
  readonly #numbers: number[] = [];
  #checks: MempoolCheck[] = [];
  #checksHead = 0;

  get size(): number {
    return this.#byHash.size;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  get includedCount(): number {
    return this.#byHash.size - this.#pending.size;
  }

  get(hash: string): Followed | undefined {
    return this.#byHash.get(hash);
  }

  /** Every pending record, oldest first. */
  pending(): Followed[] {
    return [...this.#pending.values()];
  }

  /**
   * Follows a record (a new one, or one taken over); returns the oldest pending records that had to
   * leave to keep at most `maxPending` pending. A record followed already is left as it is.
   */
  follow(record: Followed, maxPending: number): Followed[] {
    if (this.#byHash.has(record.hash)) return [];
    this.#byHash.set(record.hash, record);
    if (record.status === 'included' && record.inclusion !== undefined) this.#addIncluded(record);
    else this.#addPending(record);
    const evicted: Followed[] = [];
    for (const oldest of this.#pending.values()) {
      if (this.#pending.size <= maxPending) break;
      evicted.push(oldest);
      this.unfollow(oldest);
    }
    return evicted;
  }

  /** Stops following a record (a final state, or it left tracking). */
  unfollow(record: Followed): void {
    if (this.#byHash.get(record.hash) !== record) return;
    this.#byHash.delete(record.hash);
    if (record.status === 'pending') this.#removePending(record);
    else this.#removeIncluded(record);
  }

  /** pending → included at `inclusion`. */
  include(record: Followed, inclusion: Inclusion): void {
    this.#removePending(record);
    record.status = 'included';
    record.inclusion = inclusion;
    this.#addIncluded(record);
  }

  /** included → pending (its block left the chain); its mempool checks start over at `checkAt`. */
  reorg(record: Followed, checkAt: number): void {
    this.#removeIncluded(record);
    record.status = 'pending';
    record.inclusion = undefined;
    record.absentSince = undefined;
    record.checkAt = checkAt;
    this.#addPending(record);
  }

  /** The included records and replaced pending records a block's transactions name. */
  match(transactions: readonly BlockTransaction[], block: { number: number; hash: string }): BlockMatches {
    const included: BlockMatches['included'] = [];
    const replaced: BlockMatches['replaced'] = [];
    for (const tx of transactions) {
      const own = this.#byHash.get(tx.hash);
      if (own?.status === 'pending') {
        included.push({ record: own, inclusion: { number: block.number, hash: block.hash, index: tx.index } });
      }
      const same = this.#bySender.get(senderKey(tx.from, tx.nonce));
      if (same === undefined) continue;
      for (const record of same) if (record.hash !== tx.hash) replaced.push({ record, by: tx.hash });
    }
    return { included, replaced };
  }

  /** Takes the included records at or below block `number` out of following, lowest first (they are final). */
  takeFinal(number: number): Followed[] {
    const out: Followed[] = [];
    let taken = 0;
    for (const n of this.#numbers) {
      if (n > number) break;
      taken += 1;
      for (const record of this.#included.get(n) ?? []) {
        this.#byHash.delete(record.hash);
        out.push(record);
      }
      this.#included.delete(n);
    }
    this.#numbers.splice(0, taken);
    return out;
  }

  /** Included records at block `number`. */
  includedAt(number: number): readonly Followed[] {
    return this.#included.get(number) ?? [];
  }

  /** Included records at or above block `number` (a reorg from there). */
  includedFrom(number: number): Followed[] {
    const out: Followed[] = [];
    for (let i = this.#numbers.length - 1; i >= 0; i -= 1) {
      const n = this.#numbers[i] as number;
      if (n < number) break;
      out.push(...(this.#included.get(n) ?? []));
    }
    return out;
  }

  /** Schedules a pending record's next mempool check. */
  schedule(record: Followed, due: number): void {
    record.checkAt = due;
    this.#checks.push({ record, due });
  }

  /** Pending records whose mempool check is due at `now`, at most `limit`, taken off the queue. */
  dueChecks(now: number, limit: number): Followed[] {
    const out: Followed[] = [];
    while (this.#checksHead < this.#checks.length && out.length < limit) {
      const check = this.#checks[this.#checksHead] as MempoolCheck;
      if (check.due > now) break;
      this.#checksHead += 1;
      const { record } = check;
      if (record.checkAt === check.due && record.status === 'pending' && this.#byHash.get(record.hash) === record) {
        out.push(record);
      }
    }
    // Drop the consumed entries once they are half the array (amortised O(1) per entry).
    if (this.#checksHead > 1024 && this.#checksHead * 2 > this.#checks.length) {
      this.#checks = this.#checks.slice(this.#checksHead);
      this.#checksHead = 0;
    }
    return out;
  }

  #addPending(record: Followed): void {
    this.#pending.set(record.hash, record);
    const key = senderKey(record.from, record.nonce);
    const same = this.#bySender.get(key);
    if (same === undefined) this.#bySender.set(key, [record]);
    else same.push(record);
    this.schedule(record, record.checkAt);
  }

  #removePending(record: Followed): void {
    this.#pending.delete(record.hash);
    const key = senderKey(record.from, record.nonce);
    const same = this.#bySender.get(key);
    if (same === undefined) return;
    const rest = same.filter((other) => other !== record);
    if (rest.length === 0) this.#bySender.delete(key);
    else this.#bySender.set(key, rest);
  }

  #addIncluded(record: Followed): void {
    const number = (record.inclusion as Inclusion).number;
    const bucket = this.#included.get(number);
    if (bucket !== undefined) {
      bucket.push(record);
      return;
    }
    this.#included.set(number, [record]);
    // Blocks arrive in rising order: the new number is nearly always the last.
    let i = this.#numbers.length;
    while (i > 0 && (this.#numbers[i - 1] as number) > number) i -= 1;
    this.#numbers.splice(i, 0, number);
  }

  #removeIncluded(record: Followed): void {
    const number = record.inclusion?.number;
    if (number === undefined) return;
    const bucket = this.#included.get(number);
    if (bucket === undefined) return;
    const rest = bucket.filter((other) => other !== record);
    if (rest.length > 0) {
      this.#included.set(number, rest);
      return;
    }
    this.#included.delete(number);
    const i = this.#numbers.indexOf(number);
    if (i >= 0) this.#numbers.splice(i, 1);
  }
}

function senderKey(from: string, nonce: number): string {
  return `${from}:${nonce}`;
}
