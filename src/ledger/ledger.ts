/**
 * The transaction ledger (SPEC §19, docs/ledger.md), as the composition root wires it: the recorder (the
 * gateway's AcceptedSends port), the follower and its writer, this process's heartbeat and takeover, the
 * retention pass and the metrics. It runs in the process that owns the store and the chain tracker (with
 * gateway workers: the control process, which gets the workers' sends over IPC).
 *
 * Several processes on one store (PostgreSQL): each record is followed by one process — the one that
 * inserted it (its `owner`). Every process writes a heartbeat (`ledger_instances`) every HEARTBEAT_MS
 * (10 s); one silent for TAKEOVER_AFTER_MS (60 s), or stopped (a clean stop deletes its heartbeat), has
 * its followed records taken over by the first live process that looks (every HEARTBEAT_MS, and at
 * start), which looks them up by hash before following them. On the embedded SQLite store one process
 * owns the database, so at start every other heartbeat is stale and their records are taken at once.
 * State changes are compare-and-sets, so even two processes following one record write each change once.
 *
 * Retention, at start and every PRUNE_MS (1 h), per network (`networks.{name}.ledger`, the top level for
 * networks no longer configured): raw bytes of records first seen more than `keep_raw` ago are cleared
 * (such a record is not rebroadcast), records unchanged for `retention` are deleted (0 keeps them), and
 * the history of deleted records with them once their alerts went out.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { AcceptedSends } from '../model/accepted-sends.js';
import type { OriginCalls } from '../model/origin-calls.js';
import type { Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { pruneOrphanEvents, pruneRecords, recordedNetworks } from './event-queries.js';
import { checkStep, type LedgerChain, LedgerFollower } from './follower.js';
import { COUNTS_MS, LedgerMetrics } from './metrics.js';
import { LedgerOrigins } from './origin-lookups.js';
import { claimOrphans, followedOf, heartbeat, removeInstance, removeSilentInstances } from './queries.js';
import { countByStatus } from './record-queries.js';
import { LedgerRecorder } from './recorder.js';
import { LedgerWriter } from './writer.js';

export const HEARTBEAT_MS = 10_000;
export const TAKEOVER_AFTER_MS = 60_000;
export const PRUNE_MS = 3_600_000;

export interface LedgerOptions {
  readonly config: Readonly<Pick<Config, 'account_id' | 'networks' | 'ledger'>>;
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: MetricsRegistry | undefined;
  /** After state changes were written (main.ts wakes the notification service). */
  readonly onEvents?: () => void;
  /** This process's id in `ledger_instances` (default: host, pid and a random part). */
  readonly instanceId?: string;
}

export class Ledger {
  readonly #options: LedgerOptions;
  readonly #id: string;
  readonly #metrics: LedgerMetrics;
  readonly #writer: LedgerWriter;
  readonly #recorder: LedgerRecorder;
  #follower: LedgerFollower | undefined;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #running = new Set<Promise<void>>();

  constructor(options: LedgerOptions) {
    this.#options = options;
    this.#id = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#metrics = new LedgerMetrics(options.metrics);
    this.#writer = new LedgerWriter({
      store: options.store,
      logger: options.logger,
      ...(options.onEvents === undefined ? {} : { onWritten: options.onEvents }),
      onLost: (record) => this.#follower?.lost(record),
    });
    this.#recorder = new LedgerRecorder({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      metrics: this.#metrics,
      networks: options.config.networks,
      accountId: options.config.account_id,
      owner: this.#id,
      onRecorded: (records) => this.#follower?.follow(records),
    });
  }

  /** The gateway's AcceptedSends port: sends are queued until `start()`. */
  get sends(): AcceptedSends {
    return this.#recorder;
  }

  /** Follows the chain and origins given; takes over orphaned records; starts recording. */
  async start(parts: { chain: LedgerChain; calls: OriginCalls }): Promise<void> {
    const { store, clock, logger, config } = this.#options;
    this.#follower = new LedgerFollower({
      chain: parts.chain,
      origins: new LedgerOrigins(parts.calls, parts.chain, logger),
      networks: config.networks,
      writer: this.#writer,
      store,
      clock,
      logger,
      metrics: this.#metrics,
    });
    await heartbeat(store.db, this.#id, timestamp(clock));
    // The embedded store has one process: every other heartbeat is a run that ended.
    const silentSince = store.dialect === 'sqlite' ? Number.POSITIVE_INFINITY : clock.now() - TAKEOVER_AFTER_MS;
    await this.#takeOver(silentSince);
    this.#follower.start();
    this.#recorder.start();
    this.#every(HEARTBEAT_MS, async () => {
      await heartbeat(store.db, this.#id, timestamp(clock));
      await this.#takeOver(clock.now() - TAKEOVER_AFTER_MS);
    });
    this.#every(COUNTS_MS, () => this.countNow(), true);
    this.#every(PRUNE_MS, () => this.prune(), true);
  }

  /** Stops recording (what is queued is written) and following; this process's records can be taken over. */
  async stop(): Promise<void> {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
    await this.#recorder.stop();
    await this.#follower?.stop();
    await this.#writer.stop();
    await Promise.all([...this.#running]);
    try {
      await removeInstance(this.#options.store.db, this.#id);
    } catch (err) {
      this.#options.logger.error('could not remove the ledger heartbeat', { err });
    }
  }

  /** Runs the follower's periodic work now: lookups owed and mempool checks due (tests). */
  sweep(): void {
    this.#follower?.sweep();
  }

  /** Resolves when queued sends are recorded and the follower's work and writes are done (tests). */
  async settled(): Promise<void> {
    await this.#recorder.settled();
    await this.#follower?.settled();
    await this.#writer.settled();
  }

  /** Retention: see the header. */
  async prune(): Promise<void> {
    const { store, clock, config, logger } = this.#options;
    const now = clock.now();
    let pruned = 0;
    for (const network of new Set([...Object.keys(config.networks), ...(await recordedNetworks(store.db))])) {
      const settings = config.networks[network]?.ledger ?? config.ledger;
      const cutoff = settings.retention === 0 ? undefined : new Date(now - settings.retention).toISOString();
      pruned += await pruneRecords(store.db, network, cutoff, new Date(now - settings.keep_raw).toISOString());
    }
    const events = await pruneOrphanEvents(store.db);
    if (pruned + events > 0) logger.info('pruned old ledger records', { records: pruned, events });
  }

  async #takeOver(silentSince: number): Promise<void> {
    const { store, clock, logger } = this.#options;
    const follower = this.#follower;
    if (follower === undefined) return;
    const before = Number.isFinite(silentSince) ? new Date(silentSince).toISOString() : '9999-12-31T23:59:59.999Z';
    await removeSilentInstances(store.db, before, this.#id);
    const rows = await claimOrphans(store.db, this.#id);
    if (rows.length === 0) return;
    const now = clock.now();
    const records = rows
      .filter((row) => this.#options.config.networks[row.network]?.ledger.enabled === true)
      .map((row) =>
        followedOf(row, now + checkStep((this.#options.config.networks[row.network] ?? this.#options.config).ledger)),
      );
    follower.follow(records);
    logger.info('took over ledger records of a stopped instance', { count: rows.length });
  }

  /** Reads the store's counts for `switchyard_ledger_transactions` now (also every COUNTS_MS). */
  async countNow(): Promise<void> {
    this.#metrics.counts(await countByStatus(this.#options.store.db));
  }

  /** Runs `work` every `ms` (and at once with `now`); a run still going when the next is due skips it. */
  #every(ms: number, work: () => Promise<void>, now = false): void {
    let current: Promise<void> | undefined;
    const run = (): void => {
      if (current !== undefined) return;
      current = work()
        .catch((err: unknown) => this.#options.logger.error('ledger background work failed', { err }))
        .finally(() => {
          if (current !== undefined) this.#running.delete(current);
          current = undefined;
        });
      this.#running.add(current);
    };
    const timer = setInterval(run, ms);
    timer.unref();
    this.#timers.push(timer);
    if (now) run();
  }
}
