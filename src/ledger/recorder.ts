/**
 * The ledger's recorder (SPEC §19): the AcceptedSends port the gateway tells of every transaction an
 * origin accepted. `accepted` only queues — the send's answer never waits on the store — and a
 * background flush decodes each transaction (decode.ts: hash, sender recovered from the signature,
 * nonce) and inserts the new records in one transaction per batch (BATCH, 500), every FLUSH_MS (50 ms).
 * Decoding yields to the event loop every DECODE_SLICE (25) transactions, so answers keep flowing.
 *
 * - The queue holds at most QUEUE_MAX (10,000) sends. When the store is slow or down the queue fills;
 *   a send that finds it full is not recorded (`switchyard_ledger_unrecorded_total{reason="queue_full"}`,
 *   a warning at most once a minute) — sends themselves are never slowed or refused. A failed insert
 *   keeps its batch first in the queue and is retried every RETRY_MS (1 s).
 * - A send that cannot be decoded (not a signed transaction of the network's chain_id) is not recorded
 *   (`reason="undecodable"`, logged at debug); networks with `ledger.enabled: false` record nothing.
 * - A record is inserted once: a send already recorded (by this or another process) changes nothing.
 *   The inserting process owns the new record (follows it): `onRecorded` gets it.
 * Sends queued before `start()` are written once it runs; `stop()` writes what is queued (one attempt).
 */
import type { Clock } from '../clock.js';
import type { LedgerSettings } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { AcceptedSend, AcceptedSends } from '../model/accepted-sends.js';
import type { Store } from '../store/database.js';
import { decodeTransaction } from './decode.js';
import { checkStep } from './follower.js';
import type { LedgerMetrics } from './metrics.js';
import { insertRecords, type NewRecord, recordKey } from './queries.js';
import type { Followed } from './types.js';

export const QUEUE_MAX = 10_000;
const BATCH = 500;
const FLUSH_MS = 50;
const RETRY_MS = 1_000;
const DECODE_SLICE = 25;
const WARN_EVERY_MS = 60_000;

export interface RecordedNetwork {
  readonly chain_id: number;
  readonly ledger: LedgerSettings;
}

export interface LedgerRecorderOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: LedgerMetrics;
  readonly networks: Readonly<Record<string, RecordedNetwork>>;
  /** The routing account: whose records these are. */
  readonly accountId: string;
  /** This process's instance id (ledger_instances): the owner of what it records. */
  readonly owner: string;
  /** Records this process inserted (it follows them). */
  readonly onRecorded: (records: Followed[]) => void;
}

export class LedgerRecorder implements AcceptedSends {
  readonly #options: LedgerRecorderOptions;
  #queue: AcceptedSend[] = [];
  /** Decoded and waiting to be inserted (a failed insert keeps them here). */
  #decoded: NewRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #started = false;
  #stopped = false;
  #warnedAt = Number.NEGATIVE_INFINITY;

  constructor(options: LedgerRecorderOptions) {
    this.#options = options;
  }

  accepted(send: AcceptedSend): void {
    if (this.#stopped || this.#options.networks[send.network]?.ledger.enabled !== true) return;
    if (this.#queue.length >= QUEUE_MAX) {
      this.#options.metrics.unrecorded(send.network, 'queue_full');
      const now = this.#options.clock.monotonic();
      if (now - this.#warnedAt >= WARN_EVERY_MS) {
        this.#warnedAt = now;
        this.#options.logger.warn('the ledger queue is full (the store is slow): sends are not being recorded', {
          queued: this.#queue.length,
        });
      }
      return;
    }
    this.#queue.push(send);
    this.#schedule(FLUSH_MS);
  }

  start(): void {
    this.#started = true;
    this.#schedule(0);
  }

  /** Writes what is queued now and resolves when it is written, or refused by the store (tests). */
  async settled(): Promise<void> {
    for (;;) {
      if (this.#flushing !== undefined) {
        await this.#flushing;
        continue;
      }
      // A batch the store refused waits for its retry.
      if (!this.#started || this.#queue.length === 0 || this.#decoded.length > 0) return;
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#flush();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    if (this.#started && this.#queue.length + this.#decoded.length > 0) {
      this.#flush();
      await this.#flushing;
    }
  }

  #schedule(ms: number): void {
    if (!this.#started || this.#timer !== undefined || this.#flushing !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, ms);
    this.#timer.unref();
  }

  #flush(): void {
    if (this.#flushing !== undefined) return;
    this.#flushing = this.#write().finally(() => {
      this.#flushing = undefined;
      if (!this.#stopped && this.#queue.length + this.#decoded.length > 0) {
        this.#schedule(this.#decoded.length > 0 ? RETRY_MS : 0);
      }
    });
  }

  async #write(): Promise<void> {
    if (this.#decoded.length === 0) this.#decoded = await this.#decode(this.#queue.splice(0, BATCH));
    if (this.#decoded.length === 0) return;
    const batch = this.#decoded;
    let inserted: Set<string>;
    try {
      inserted = await insertRecords(this.#options.store.db, batch);
    } catch (err) {
      this.#options.logger.error('recording transactions failed; retrying', { err, count: batch.length });
      return;
    }
    this.#decoded = [];
    const step = (network: string) => checkStep((this.#options.networks[network] as RecordedNetwork).ledger);
    const followed = batch
      .filter((record) => inserted.has(recordKey(record.network, record.hash)))
      .map((record) => newFollowed(record, Date.parse(record.at) + step(record.network)));
    if (followed.length > 0) this.#options.onRecorded(followed);
  }

  /** Decodes a batch (yielding every DECODE_SLICE); one record per (network, hash), origins merged. */
  async #decode(sends: readonly AcceptedSend[]): Promise<NewRecord[]> {
    const records = new Map<string, NewRecord>();
    for (const [i, send] of sends.entries()) {
      if (i > 0 && i % DECODE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const network = this.#options.networks[send.network] as RecordedNetwork;
      let decoded: ReturnType<typeof decodeTransaction>;
      try {
        decoded = decodeTransaction(send.raw, network.chain_id);
      } catch (err) {
        this.#options.metrics.unrecorded(send.network, 'undecodable');
        this.#options.logger.debug('an accepted transaction could not be decoded; not recorded', {
          network: send.network,
          reason: (err as Error).message,
        });
        continue;
      }
      const key = recordKey(send.network, decoded.hash);
      const known = records.get(key);
      if (known !== undefined) {
        known.origins = [...new Set([...known.origins, ...send.origins])];
        continue;
      }
      records.set(key, {
        network: send.network,
        hash: decoded.hash,
        accountId: this.#options.accountId,
        from: decoded.from,
        nonce: decoded.nonce,
        keyId: send.keyId ?? null,
        client: send.client,
        origins: [...send.origins],
        raw: send.raw.toLowerCase(),
        owner: this.#options.owner,
        at: new Date(send.at).toISOString(),
      });
    }
    return [...records.values()];
  }
}

function newFollowed(record: NewRecord, checkAt: number): Followed {
  return {
    network: record.network,
    hash: record.hash,
    from: record.from,
    nonce: record.nonce,
    keyId: record.keyId,
    accountId: record.accountId,
    firstSeen: Date.parse(record.at),
    status: 'pending',
    version: 0,
    inclusion: undefined,
    rebroadcasts: 0,
    absentSince: undefined,
    checkAt,
  };
}
