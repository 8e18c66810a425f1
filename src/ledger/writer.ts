/**
 * The follower's store writes, in the order it decided them, off the chain's event path: state changes
 * (each a compare-and-set with its event, queries.ts `applyChanges`), owner changes and rebroadcast
 * counts. Consecutive state changes go in one transaction (up to BATCH, 500): a block that includes 200
 * followed transactions is one commit.
 *
 * A change the store refuses because the row moved on (another process changed it) is not retried: the
 * record is handed to `onLost` and no longer followed here. A write that fails (the store is down) stays
 * first in the queue and is retried every RETRY_MS (1 s), so an outage delays events but loses none while
 * the process runs; what is queued at `stop()` gets one last attempt, and anything left is found again by
 * whoever follows the records next (the lookup on taking them over re-derives their state).
 */
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import { applyChanges, type LedgerChange, setOwner, setRebroadcasts } from './queries.js';
import type { Followed } from './types.js';

const BATCH = 500;
export const RETRY_MS = 1_000;

type Op =
  | { readonly kind: 'change'; readonly change: LedgerChange }
  | { readonly kind: 'owner'; readonly records: readonly Followed[]; readonly owner: string }
  | { readonly kind: 'rebroadcasts'; readonly record: Followed };

export interface LedgerWriterOptions {
  readonly store: Store;
  readonly logger: Logger;
  /** After changes were written (the notification service is woken: their events may raise alerts). */
  readonly onWritten?: () => void;
  /** A change the row no longer allowed: the record is someone else's now. */
  readonly onLost: (record: Followed) => void;
}

export class LedgerWriter {
  readonly #options: LedgerWriterOptions;
  #queue: Op[] = [];
  #draining: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: LedgerWriterOptions) {
    this.#options = options;
  }

  change(change: LedgerChange): void {
    this.#push({ kind: 'change', change });
  }

  owner(records: readonly Followed[], owner: string): void {
    if (records.length > 0) this.#push({ kind: 'owner', records, owner });
  }

  rebroadcasts(record: Followed): void {
    this.#push({ kind: 'rebroadcasts', record });
  }

  /** Resolves when nothing is queued or being written (tests, stop). */
  async settled(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  /** Writes what is queued once more, then takes nothing new. */
  async stop(): Promise<void> {
    await this.settled();
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#drain();
    await this.settled();
    this.#stopped = true;
    this.#queue = [];
  }

  #push(op: Op): void {
    if (this.#stopped) return;
    this.#queue.push(op);
    if (this.#retry === undefined) this.#drain();
  }

  #drain(): void {
    if (this.#draining !== undefined) return;
    this.#draining = this.#write().finally(() => {
      this.#draining = undefined;
    });
  }

  async #write(): Promise<void> {
    let wrote = false;
    while (this.#queue.length > 0) {
      const first = this.#queue[0] as Op;
      try {
        if (first.kind === 'change') {
          const batch: LedgerChange[] = [];
          for (const op of this.#queue) {
            if (op.kind !== 'change' || batch.length >= BATCH) break;
            batch.push(op.change);
          }
          const applied = await applyChanges(this.#options.store.db, batch);
          this.#queue.splice(0, batch.length);
          applied.forEach((ok, i) => {
            if (ok) wrote = true;
            else this.#lost((batch[i] as LedgerChange).record);
          });
        } else {
          if (first.kind === 'owner') await setOwner(this.#options.store.db, first.records, first.owner);
          else await setRebroadcasts(this.#options.store.db, first.record);
          this.#queue.shift();
        }
      } catch (err) {
        this.#options.logger.error('writing the transaction ledger failed; retrying', { err });
        if (!this.#stopped) {
          this.#retry = setTimeout(() => {
            this.#retry = undefined;
            this.#drain();
          }, RETRY_MS);
          this.#retry.unref();
        }
        break;
      }
    }
    if (wrote) this.#options.onWritten?.();
  }

  #lost(record: Followed): void {
    this.#options.logger.info('a ledger record changed elsewhere; no longer followed here', {
      network: record.network,
      hash: record.hash,
    });
    // Later changes of the same record would fail the same way.
    this.#queue = this.#queue.filter((op) => op.kind !== 'change' || op.change.record !== record);
    this.#options.onLost(record);
  }
}
