/**
 * `switchyard_origin_integrity_alert` (SPEC §18): an origin whose answer failed verification. The gateway
 * reports each failure (model/verify-failures.ts; a worker's reports come through the control process);
 * this records incidents in the store for the notification dispatcher, like the other chain incidents.
 *
 * - START: the first failure of an origin (per network, pool and origin) while none is open for it. It
 *   concerns the origin's pool only (its scope: the `pool_id` filter and who is told). Its `data` names
 *   the origin, its pool, the method, the block (`block_number`, or `block_hash` when the
 *   client named the block by hash), the check that failed and why, and when.
 * - Further failures while it is open only move its clock: END after `networks.{name}.verify_anchor.
 *   clear_after` (default 10 min) without a failure, judged every TICK_MS (250 ms) on the injected clock.
 *   The END's `data` is the START's with `since` the last failure.
 * - `start()` adopts integrity incidents left open (an earlier run, another process): each ends after
 *   `clear_after` without a failure seen here. With several processes on one store, only one incident
 *   per origin is open at a time (the unique open key), and the first process whose own `clear_after`
 *   passed ends it.
 * Store writes go through the incidents' write queue (write-queue.ts: in order, retried, never lost).
 */
import { randomUUID } from 'node:crypto';
import type { ChainTracker } from '../chain/tracker.js';
import type { Clock } from '../clock.js';
import type { NetworkConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { VerifyFailureReport, VerifyFailureSink } from '../model/verify-failures.js';
import type { Store } from '../store/database.js';
import { closeIncident, openIncident, openIncidents } from './queries.js';
import { incidentScope } from './scope.js';
import type { IncidentData } from './types.js';
import { WriteQueue } from './write-queue.js';

export const TICK_MS = 250;
const DEFAULT_CLEAR_AFTER_MS = 600_000;

export interface IntegrityIncidentsOptions {
  readonly chain: Pick<ChainTracker, 'trackedOrigins'>;
  readonly networks: Readonly<Record<string, Partial<Pick<NetworkConfig, 'verify_anchor'>>>>;
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onRecorded?: () => void;
  readonly tickMs?: number;
}

interface OpenIntegrity {
  readonly network: string;
  readonly subject: string;
  readonly data: IncidentData;
  /** When the last failure was seen (ms). */
  last: number;
}

export class IntegrityIncidents implements VerifyFailureSink {
  readonly #options: IntegrityIncidentsOptions;
  readonly #writes: WriteQueue;
  /** `network|pool id/origin` → the open incident */
  readonly #open = new Map<string, OpenIntegrity>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: IntegrityIncidentsOptions) {
    this.#options = options;
    this.#writes = new WriteQueue(options.logger, options.onRecorded);
  }

  /** Adopts open integrity incidents, then checks every TICK_MS. */
  async start(): Promise<void> {
    const now = this.#options.clock.now();
    for (const incident of await openIncidents(this.#options.store.db)) {
      const { data } = incident;
      const poolId = data.pool_ids?.[0];
      const origin = data.origins?.[0];
      if (incident.kind !== 'origin_integrity' || poolId === undefined || origin === undefined) continue;
      const subject = `${poolId}/${origin}`;
      this.#open.set(`${incident.network}|${subject}`, { network: incident.network, subject, data, last: now });
    }
    if (this.#stopped) return;
    this.#timer = setInterval(() => this.check(), this.#options.tickMs ?? TICK_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#writes.stop();
  }

  failed(report: VerifyFailureReport): void {
    if (this.#stopped) return;
    const now = this.#options.clock.now();
    const subject = `${report.poolId}/${report.origin}`;
    const key = `${report.network}|${subject}`;
    const open = this.#open.get(key);
    if (open !== undefined) {
      open.last = now;
      return;
    }
    const at = new Date(now).toISOString();
    const data = startData(report, at);
    this.#open.set(key, { network: report.network, subject, data, last: now });
    // Only the origin's own pool: no other tenant of the network learns of it.
    const scope = incidentScope(this.#options.chain, report.network, [subject]).filter((e) => e.origin !== undefined);
    const incident = { id: randomUUID(), network: report.network, kind: 'origin_integrity' as const, data, scope, at };
    this.#options.logger.warn('chain incident started: origin_integrity', {
      network: report.network,
      origin: report.origin,
      method: report.method,
    });
    this.#writes.enqueue(async () => (await openIncident(this.#options.store.db, { ...incident, subject })).created);
    this.#writes.drain();
  }

  /** Ends the incidents whose origin had no failure for `clear_after` (the timer's work; tests call it). */
  check(): void {
    const now = this.#options.clock.now();
    for (const [key, open] of this.#open) {
      const clearAfter = this.#options.networks[open.network]?.verify_anchor?.clear_after ?? DEFAULT_CLEAR_AFTER_MS;
      if (now - open.last < clearAfter) continue;
      this.#open.delete(key);
      const end: IncidentData = { ...open.data, since: new Date(open.last).toISOString() };
      const at = new Date(now).toISOString();
      this.#options.logger.info('chain incident ended: origin_integrity', {
        network: open.network,
        origin: open.subject,
      });
      this.#writes.enqueue(() =>
        closeIncident(this.#options.store.db, open.network, 'origin_integrity', end, at, open.subject),
      );
    }
    this.#writes.drain();
  }

  /** Resolves when every queued write is done (tests). */
  settled(): Promise<void> {
    return this.#writes.settled();
  }
}

function startData(report: VerifyFailureReport, at: string): IncidentData {
  const { block } = report;
  return {
    network: report.network,
    kind: 'origin_integrity',
    origins: [report.origin],
    pool_ids: [report.poolId],
    method: report.method,
    ...(typeof block === 'number' ? { block_number: block } : typeof block === 'string' ? { block_hash: block } : {}),
    check: report.check,
    reason: report.reason,
    since: at,
  };
}
