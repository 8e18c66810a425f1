/**
 * The ledger's follower (SPEC §19): follows each record it owns from `pending` to a final state, from
 * what the chain tracker tells (heads, reorgs, gaps, finalized blocks) and what origins answer
 * (origin-lookups.ts). Everything it decides changes its memory at once (network-ledger.ts) and goes to
 * the store through the writer (writer.ts), each change a compare-and-set with its event.
 *
 * Per network, in the tracker's order (one job at a time):
 * - a new head: included records of that height in another block go back to `pending` (`reorged`: an
 *   origin's answer included them in a block the chain did not keep); then, when the network has
 *   pending records, the block's transactions are fetched by its hash;
 *   each names the record it includes (`pending → included`, block number, hash, index) and the pending
 *   records of the same sender and nonce it replaces (`replaced`, `replaced_by` = its hash). A block no
 *   origin could give makes the network's pending records be looked up by hash (below). Then finality.
 * - finality (each head and each finalized block): included records at or below the network's finalized
 *   block — or, while no finalized block is known, at or below `head − finality_depth` — become `final`.
 *   The network is kept "in use" for the tracker while it has included records, so its finalized block
 *   stays fetched.
 * - a reorg: included records at or above the fork point go back to `pending` with a `reorged` event; the
 *   new branch's heads that follow include them again.
 * - a gap (heads never seen): the network's pending records are looked up by hash.
 * Lookups by hash (records just recorded or taken over, and after a gap or a missing block) settle what
 * the origins already know: a pending record found in a canonical block is included; an included record
 * found elsewhere, or nowhere, goes back through `reorged`.
 *
 * Dropped (SPEC §19 "Details, decided"): every pending record's mempools are checked every
 * max(dropped_after / 4, 100 ms), on every usable origin (batched). Seen anywhere: it is fine. Answered
 * null by every usable origin: absent, from that check on; absent for `dropped_after` (no sighting, no
 * rebroadcast in between) → with `rebroadcast` and fewer than `max_rebroadcasts` rebroadcasts, while the
 * raw bytes are kept and the sender's nonce at `latest` is ≤ the transaction's, it is sent to every
 * usable origin and its timer starts over; otherwise it is `dropped`. An origin that fails to answer
 * makes that check say nothing. The checks run from a SWEEP_MS (250 ms) timer that reads the Clock.
 *
 * Bounds: at most `max_pending` pending records per network in memory; the oldest leave first (owner
 * '' in the store: nobody follows them; `switchyard_ledger_untracked_total`). `replaced`, `dropped` and
 * `final` are final states: such records are no longer followed.
 */
import type { ChainListener, ChainReorg } from '../chain/types.js';
import type { Clock } from '../clock.js';
import type { LedgerSettings } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import type { LedgerMetrics } from './metrics.js';
import { NetworkLedger } from './network-ledger.js';
import type { LedgerOrigins, LedgerOriginsChain } from './origin-lookups.js';
import { rawOf } from './queries.js';
import type { Followed, Inclusion, LedgerEventStatus, LedgerStatus } from './types.js';
import type { LedgerWriter } from './writer.js';

export const SWEEP_MS = 250;
/** Mempool checks started per network and sweep, at most. */
const CHECKS_PER_SWEEP = 2_000;

/** What the follower reads of the chain tracker. */
export interface LedgerChain extends LedgerOriginsChain {
  addListener(listener: ChainListener): () => void;
  canonicalHead(network: string): { readonly number: number } | undefined;
  canonical(network: string): ReadonlyArray<{ readonly number: number; readonly hash: string }>;
  finalized(network: string): { readonly number: number } | undefined;
  touch(network: string): void;
}

export interface FollowedNetwork {
  readonly finality_depth: number;
  readonly ledger: LedgerSettings;
}

export interface LedgerFollowerOptions {
  readonly chain: LedgerChain;
  readonly origins: LedgerOrigins;
  readonly networks: Readonly<Record<string, FollowedNetwork>>;
  readonly writer: LedgerWriter;
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: LedgerMetrics;
}

/** When a pending record's next mempool check is due after `now`. */
export function checkStep(settings: Pick<LedgerSettings, 'dropped_after'>): number {
  return Math.max(100, Math.floor(settings.dropped_after / 4));
}

export class LedgerFollower {
  readonly #options: LedgerFollowerOptions;
  readonly #ledgers = new Map<string, NetworkLedger>();
  readonly #jobs = new Map<string, Promise<void>>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #checking = new Set<string>();
  readonly #recheck = new Set<string>();
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: LedgerFollowerOptions) {
    this.#options = options;
    for (const [name, network] of Object.entries(options.networks)) {
      if (network.ledger.enabled) this.#ledgers.set(name, new NetworkLedger());
    }
  }

  start(): void {
    this.#unsubscribe = this.#options.chain.addListener({
      head: (network, block) => this.#enqueue(network, () => this.#block(network, block)),
      reorg: (network, reorg) => this.#enqueue(network, async () => this.#reorged(network, reorg)),
      gap: (network) => this.#recheck.add(network),
      finalized: (network) => this.#enqueue(network, async () => this.#finality(network)),
    });
    this.#timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.settled();
  }

  /** Resolves when no job, lookup or check is running (tests; stop). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Records followed now, per network (metrics, tests). */
  followed(network: string): { pending: number; included: number } {
    const ledger = this.#ledgers.get(network);
    return { pending: ledger?.pendingCount ?? 0, included: ledger?.includedCount ?? 0 };
  }

  /**
   * Follows records (just recorded, or taken over) and looks them up by hash; returns those that left
   * tracking at once (max_pending).
   */
  follow(records: readonly Followed[]): Followed[] {
    const evicted: Followed[] = [];
    const byNetwork = new Map<string, Followed[]>();
    for (const record of records) {
      const ledger = this.#ledgers.get(record.network);
      if (ledger === undefined) continue;
      const settings = this.#settings(record.network);
      evicted.push(...ledger.follow(record, settings.max_pending));
      const list = byNetwork.get(record.network) ?? [];
      list.push(record);
      byNetwork.set(record.network, list);
    }
    this.#untracked(evicted);
    for (const [network, list] of byNetwork) this.#track(this.#reconcile(network, list));
    return evicted;
  }

  /** One sweep: lookups owed after a gap, and the mempool checks that are due. */
  sweep(): void {
    if (this.#stopped) return;
    for (const [network, ledger] of this.#ledgers) {
      if (this.#recheck.delete(network) && ledger.pendingCount > 0) {
        this.#track(this.#reconcile(network, ledger.pending()));
      }
      if (!this.#checking.has(network) && ledger.pendingCount > 0) this.#track(this.#checkMempools(network, ledger));
    }
  }

  #settings(network: string): LedgerSettings {
    return (this.#options.networks[network] as FollowedNetwork).ledger;
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => this.#options.logger.error('ledger follower failed', { err }));
    this.#inFlight.add(tracked);
    void tracked.finally(() => this.#inFlight.delete(tracked));
  }

  #enqueue(network: string, job: () => Promise<void>): void {
    if (this.#stopped || !this.#ledgers.has(network)) return;
    const previous = this.#jobs.get(network) ?? Promise.resolve();
    const next = previous.then(job).catch((err: unknown) => {
      this.#options.logger.error('ledger follower failed on a chain event', { network, err });
    });
    this.#jobs.set(network, next);
    this.#track(next);
  }

  async #block(network: string, block: { number: number; hash: string }): Promise<void> {
    const ledger = this.#ledgers.get(network) as NetworkLedger;
    // Included at this height in another block (as an origin's answer said): that block is not canonical.
    for (const record of [...ledger.includedAt(block.number)]) {
      if (record.inclusion?.hash !== block.hash) this.#reorg(ledger, record);
    }
    if (ledger.pendingCount > 0) {
      const transactions = await this.#options.origins.blockTransactions(network, block.hash);
      if (transactions === undefined) {
        this.#options.logger.debug('no origin gave a block; pending transactions will be looked up', {
          network,
          block: block.number,
        });
        this.#recheck.add(network);
      } else {
        const { included, replaced } = ledger.match(transactions, block);
        for (const { record, inclusion } of included) this.#include(ledger, record, inclusion);
        for (const { record, by } of replaced) {
          if (record.status === 'pending' && ledger.get(record.hash) === record) this.#replace(ledger, record, by);
        }
      }
    }
    this.#finality(network);
  }

  #finality(network: string): void {
    const ledger = this.#ledgers.get(network) as NetworkLedger;
    if (ledger.includedCount === 0) return;
    const { chain } = this.#options;
    chain.touch(network);
    const finalized = chain.finalized(network)?.number;
    const head = chain.canonicalHead(network)?.number;
    const depth = (this.#options.networks[network] as FollowedNetwork).finality_depth;
    const line = finalized ?? (head === undefined ? undefined : head - depth);
    if (line === undefined) return;
    for (const record of ledger.takeFinal(line)) {
      this.#change(record, 'final', 'final', { eventBlock: record.inclusion });
    }
  }

  #reorged(network: string, reorg: ChainReorg): void {
    const ledger = this.#ledgers.get(network) as NetworkLedger;
    for (const record of ledger.includedFrom(reorg.forkPoint)) this.#reorg(ledger, record);
  }

  /** Looks records up by hash and settles what the origins already know of them. */
  async #reconcile(network: string, records: readonly Followed[]): Promise<void> {
    if (records.length === 0) return;
    const ledger = this.#ledgers.get(network) as NetworkLedger;
    const found = await this.#options.origins.lookup(
      network,
      records.map((record) => record.hash),
    );
    if (found === undefined) {
      this.#recheck.add(network);
      return;
    }
    const canonical = this.#canonical(network);
    for (const record of records) {
      const where = found.get(record.hash);
      if (where === undefined || ledger.get(record.hash) !== record) continue;
      const inclusion = where.kind === 'block' && canonical(where.inclusion) ? where.inclusion : undefined;
      if (record.status === 'included') {
        if (inclusion !== undefined && inclusion.hash === record.inclusion?.hash) continue;
        this.#reorg(ledger, record);
      }
      if (inclusion !== undefined) this.#include(ledger, record, inclusion);
    }
    this.#finality(network);
  }

  /** Whether an inclusion an origin claims is on the canonical chain as far as the tracker's window shows. */
  #canonical(network: string): (inclusion: Inclusion) => boolean {
    const window = new Map<number, string>();
    for (const block of this.#options.chain.canonical(network)) window.set(block.number, block.hash);
    return (inclusion) => {
      const hash = window.get(inclusion.number);
      return hash === undefined || hash === inclusion.hash;
    };
  }

  async #checkMempools(network: string, ledger: NetworkLedger): Promise<void> {
    const due = ledger.dueChecks(this.#options.clock.now(), CHECKS_PER_SWEEP);
    if (due.length === 0) return;
    this.#checking.add(network);
    try {
      const verdicts = await this.#options.origins.mempools(
        network,
        due.map((record) => record.hash),
      );
      const now = this.#options.clock.now();
      const settings = this.#settings(network);
      const canonical = this.#canonical(network);
      const overdue: Followed[] = [];
      for (const record of due) {
        const verdict = verdicts.get(record.hash);
        if (verdict === undefined || record.status !== 'pending' || ledger.get(record.hash) !== record) continue;
        if (verdict.inclusion !== undefined && canonical(verdict.inclusion)) {
          this.#include(ledger, record, verdict.inclusion);
          continue;
        }
        if (verdict.seen) record.absentSince = undefined;
        else if (verdict.absent) record.absentSince ??= now;
        ledger.schedule(record, now + checkStep(settings));
        if (record.absentSince !== undefined && now - record.absentSince >= settings.dropped_after)
          overdue.push(record);
      }
      for (const record of overdue) await this.#dropOrRebroadcast(network, ledger, record);
    } finally {
      this.#checking.delete(network);
    }
  }

  /** A record absent for dropped_after: sent again when the settings and its nonce allow, else dropped. */
  async #dropOrRebroadcast(network: string, ledger: NetworkLedger, record: Followed): Promise<void> {
    const settings = this.#settings(network);
    const { origins, logger } = this.#options;
    if (settings.rebroadcast && record.rebroadcasts < settings.max_rebroadcasts) {
      const raw = await rawOf(this.#options.store.db, network, record.hash);
      if (raw !== undefined) {
        const nonce = await origins.nonceAt(network, record.from);
        // Not knowing the sender's nonce decides nothing: the next check asks again.
        if (nonce === undefined) return;
        if (nonce <= record.nonce) {
          const took = await origins.broadcast(network, raw);
          if (took.length > 0 && record.status === 'pending' && ledger.get(record.hash) === record) {
            record.rebroadcasts += 1;
            record.absentSince = undefined;
            ledger.schedule(record, this.#options.clock.now() + checkStep(settings));
            this.#options.writer.rebroadcasts(record);
            this.#options.metrics.rebroadcast(network);
            logger.info('transaction rebroadcast', {
              network,
              hash: record.hash,
              rebroadcasts: record.rebroadcasts,
              origins: took,
            });
            return;
          }
        }
      }
    }
    if (record.status === 'pending' && ledger.get(record.hash) === record) {
      ledger.unfollow(record);
      this.#change(record, 'dropped', 'dropped', {});
    }
  }

  #include(ledger: NetworkLedger, record: Followed, inclusion: Inclusion): void {
    if (record.status !== 'pending') return;
    const from = { status: record.status, version: record.version };
    ledger.include(record, inclusion);
    this.#change(record, 'included', 'included', { inclusion, from });
  }

  #replace(ledger: NetworkLedger, record: Followed, by: string): void {
    ledger.unfollow(record);
    this.#change(record, 'replaced', 'replaced', { replacedBy: by });
  }

  #reorg(ledger: NetworkLedger, record: Followed): void {
    const from = { status: record.status, version: record.version };
    const left = record.inclusion;
    ledger.reorg(record, this.#options.clock.now() + checkStep(this.#settings(record.network)));
    this.#change(record, 'pending', 'reorged', { from, inclusion: null, eventBlock: left });
  }

  #change(
    record: Followed,
    to: LedgerStatus,
    event: LedgerEventStatus,
    extra: {
      from?: { status: LedgerStatus; version: number };
      inclusion?: Inclusion | null;
      replacedBy?: string;
      eventBlock?: Inclusion | undefined;
    },
  ): void {
    const from = extra.from ?? { status: record.status, version: record.version };
    record.version = from.version + 1;
    this.#options.writer.change({
      record,
      from,
      to,
      event,
      ...(extra.inclusion === undefined ? {} : { inclusion: extra.inclusion }),
      ...(extra.replacedBy === undefined ? {} : { replacedBy: extra.replacedBy }),
      ...(extra.eventBlock === undefined ? {} : { eventBlock: extra.eventBlock }),
      at: new Date(this.#options.clock.now()).toISOString(),
    });
  }

  #untracked(records: readonly Followed[]): void {
    if (records.length === 0) return;
    this.#options.writer.owner(records, '');
    for (const record of records) this.#options.metrics.untracked(record.network);
    this.#options.logger.warn('ledger.max_pending reached: the oldest pending transactions are no longer followed', {
      network: records[0]?.network,
      count: records.length,
    });
  }

  /** The writer could not apply a change: the record is someone else's now. */
  lost(record: Followed): void {
    this.#ledgers.get(record.network)?.unfollow(record);
  }
}
