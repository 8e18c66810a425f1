/**
 * The ledger's Prometheus metrics (the API listener's `/metrics`):
 *
 *   switchyard_ledger_transactions{network,status}      records in the store by status (the store's
 *                                                        counts: every instance sharing it shows the same;
 *                                                        read every COUNTS_MS, 15 s)
 *   switchyard_ledger_untracked_total{network}          pending records this instance stopped following
 *                                                        (ledger.max_pending: the oldest leave first)
 *   switchyard_ledger_unrecorded_total{network,reason}  accepted sends not recorded: `queue_full` (the
 *                                                        store is slow), `undecodable` (no signed tx)
 *   switchyard_ledger_rebroadcasts_total{network}       transactions sent again (ledger.rebroadcast)
 */
import type { MetricsRegistry } from '../metrics/registry.js';

export const COUNTS_MS = 15_000;

export interface StatusCount {
  readonly network: string;
  readonly status: string;
  readonly count: number;
}

export class LedgerMetrics {
  #counts: readonly StatusCount[] = [];
  readonly #untracked;
  readonly #unrecorded;
  readonly #rebroadcasts;

  constructor(registry: MetricsRegistry | undefined) {
    registry?.gauge(
      'switchyard_ledger_transactions',
      'Transactions in the ledger by network and status (the store: same in every instance)',
      ['network', 'status'],
      () => this.#counts.map(({ network, status, count }) => ({ labels: { network, status }, value: count })),
    );
    this.#untracked = registry?.counter(
      'switchyard_ledger_untracked_total',
      'Pending transactions no longer followed by this instance: ledger.max_pending was reached (oldest first)',
      ['network'],
    );
    this.#unrecorded = registry?.counter(
      'switchyard_ledger_unrecorded_total',
      'Accepted eth_sendRawTransaction not recorded (queue_full: the store is slow; undecodable)',
      ['network', 'reason'],
    );
    this.#rebroadcasts = registry?.counter(
      'switchyard_ledger_rebroadcasts_total',
      'Transactions sent again to every healthy origin before being declared dropped (ledger.rebroadcast)',
      ['network'],
    );
  }

  counts(counts: readonly StatusCount[]): void {
    this.#counts = counts;
  }

  untracked(network: string): void {
    this.#untracked?.inc({ network });
  }

  unrecorded(network: string, reason: 'queue_full' | 'undecodable'): void {
    this.#unrecorded?.inc({ network, reason });
  }

  rebroadcast(network: string): void {
    this.#rebroadcasts?.inc({ network });
  }
}
