/**
 * The dispatcher turns health events into deliveries. It reads `health_events` after its cursor in
 * `seq` order (up to BATCH at a time) and, in ONE transaction per batch, writes every delivery those
 * events raise and moves the cursor past them — before anything is sent. So an event is either fully
 * turned into deliveries or not at all, and a crash at any point loses nothing.
 *
 * For each event:
 * - Correlation: an Unhealthy event opens (or reuses) the object's correlation id → ALERT_STATE_EVENT_START;
 *   a Healthy event closes it → ALERT_STATE_EVENT_END with the same id (a fresh id if none was open).
 * - Every enabled `load_balancing_health_alert` policy of the pool's account whose filters match
 *   (matching.ts) gets one delivery per mechanism: each email address and each webhook destination.
 * - Legacy per-pool email: each address in the pool's non-empty `notification_email` gets one delivery
 *   when the pool's `notification_filter` allows the event — unless the same address already gets this
 *   event through a policy (one email per address and event, not two).
 *
 * Several dispatchers (several `serve` processes on one PostgreSQL) are safe: the cursor moves by
 * compare-and-set, so only one transaction per batch commits; deliveries are unique by dedupe key.
 * PostgreSQL may commit a lower `seq` after a higher one (concurrent writers) or never (rollback): a gap
 * in `seq` is waited for up to GAP_WAIT_MS (10 s) before it is passed, and passed seqs are re-checked
 * for LATE_WINDOW_MS (10 min) so a late commit is still dispatched. SQLite has no such gaps.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { type HealthEventRow, readEventsAfter, readEventsBySeq } from '../health/events.js';
import type { Logger } from '../log.js';
import { parseNotificationEmail } from '../model/pool-schema.js';
import { poolLegacySettings } from '../pools/legacy-email.js';
import type { Db, Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { newDelivery, type PolicyAlert, policyAlertRows } from './delivery-rows.js';
import { HEALTH_ALERT_TYPE, legacyFilterAllows, objectKey, policyMatches } from './matching.js';
import { type AlertContext, alertSummary, legacyAlertEmail, policyAlertEmail, webhookBody } from './messages.js';
import { enabledPolicies, type Policy } from './queries/alert-policies.js';
import {
  advanceCursor,
  closeCorrelation,
  insertDeliveries,
  type NewDelivery,
  openCorrelation,
  readCursor,
} from './queries/outbox.js';

const BATCH = 100;
export const GAP_WAIT_MS = 10_000;
export const LATE_WINDOW_MS = 600_000;

export interface DispatcherOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Base URL of the management API, for "how to manage this" lines in emails. */
  apiBase: string;
}

class CursorMoved extends Error {}

export class Dispatcher {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #apiBase: string;
  readonly #gapWaitMs: number;
  /** First time (the clock's monotonic ms) a gap ending just before this seq was seen. */
  readonly #gapSeen = new Map<number, number>();
  /** Seqs passed over as gaps, re-checked until the value (monotonic ms) passes. */
  readonly #late = new Map<number, number>();

  constructor(options: DispatcherOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#apiBase = options.apiBase;
    this.#gapWaitMs = options.store.dialect === 'postgres' ? GAP_WAIT_MS : 0;
  }

  /** Dispatches every event available now. Returns how many events were turned into deliveries. */
  async pass(): Promise<number> {
    let total = await this.#lateEvents();
    for (;;) {
      const processed = await this.#batch();
      total += processed;
      if (processed === 0) return total;
    }
  }

  async #batch(): Promise<number> {
    const db = this.#store.db;
    const cursor = await readCursor(db);
    const events = await readEventsAfter(db, cursor, BATCH);
    const ready: HealthEventRow[] = [];
    let expected = cursor + 1;
    for (const event of events) {
      if (event.seq !== expected && !this.#gapPassable(event.seq, expected)) break;
      ready.push(event);
      expected = event.seq + 1;
    }
    const last = ready.at(-1);
    if (last === undefined) return 0;
    try {
      await db.transaction().execute(async (trx) => {
        if (!(await advanceCursor(trx, cursor, last.seq))) throw new CursorMoved();
        await insertDeliveries(trx, await this.#deliveriesFor(trx, ready));
      });
    } catch (err) {
      if (err instanceof CursorMoved) return 0; // another dispatcher took this batch
      throw err;
    }
    this.#logger.debug('dispatched health events', { from_seq: ready[0]?.seq, to_seq: last.seq });
    return ready.length;
  }

  /** A gap before `seq` (seqs `expected`..`seq-1` missing) may be passed once it has lasted GAP_WAIT_MS. */
  #gapPassable(seq: number, expected: number): boolean {
    const now = this.#clock.monotonic();
    const seen = this.#gapSeen.get(seq) ?? now;
    this.#gapSeen.set(seq, seen);
    if (now - seen < this.#gapWaitMs) return false;
    this.#gapSeen.delete(seq);
    for (let missing = expected; missing < seq && missing < expected + 1000; missing++) {
      this.#late.set(missing, now + LATE_WINDOW_MS);
    }
    return true;
  }

  /** Dispatches events that committed after their seq was passed as a gap (dedupe keys keep it once). */
  async #lateEvents(): Promise<number> {
    if (this.#late.size === 0) return 0;
    const now = this.#clock.monotonic();
    for (const [seq, until] of this.#late) if (until < now) this.#late.delete(seq);
    const found = await readEventsBySeq(this.#store.db, [...this.#late.keys()]);
    if (found.length === 0) return 0;
    await this.#store.db.transaction().execute(async (trx) => {
      await insertDeliveries(trx, await this.#deliveriesFor(trx, found));
    });
    for (const event of found) this.#late.delete(event.seq);
    this.#logger.warn('dispatched late-committed health events', { seqs: found.map((event) => event.seq) });
    return found.length;
  }

  async #deliveriesFor(db: Db, events: HealthEventRow[]): Promise<NewDelivery[]> {
    const policiesByAccount = new Map<string, Policy[]>();
    const out: NewDelivery[] = [];
    const now = timestamp(this.#clock);
    for (const event of events) {
      const ctx = await this.#correlate(db, event, now);
      let policies = policiesByAccount.get(event.account_id);
      if (policies === undefined) {
        policies = await enabledPolicies(db, event.account_id, HEALTH_ALERT_TYPE);
        policiesByAccount.set(event.account_id, policies);
      }
      const policyEmails = new Set<string>();
      for (const policy of policies.filter((p) => policyMatches(p, event))) {
        for (const { id: address } of policy.mechanisms.email ?? []) policyEmails.add(address.toLowerCase());
        out.push(...policyAlertRows(this.#policyAlert(ctx, policy, now)));
      }
      out.push(...(await this.#legacyEmails(db, ctx, policyEmails, now)));
    }
    return out;
  }

  async #correlate(db: Db, event: HealthEventRow, now: string): Promise<AlertContext> {
    const key = objectKey(event);
    if (event.new_health === 'Unhealthy') {
      const correlationId = await openCorrelation(db, event.account_id, key, randomUUID(), now);
      return { event, alertEvent: 'ALERT_STATE_EVENT_START', correlationId };
    }
    const open = await closeCorrelation(db, event.account_id, key);
    return { event, alertEvent: 'ALERT_STATE_EVENT_END', correlationId: open ?? randomUUID() };
  }

  #policyAlert(ctx: AlertContext, policy: Policy, now: string): PolicyAlert {
    return {
      accountId: ctx.event.account_id,
      eventId: ctx.event.id,
      policy,
      alertType: HEALTH_ALERT_TYPE,
      key: `alert:${ctx.event.id}:${policy.id}`,
      createdAt: now,
      mail: () => {
        const mail = policyAlertEmail(ctx, policy, this.#apiBase);
        return { subject: mail.subject, text: mail.text };
      },
      webhook: () => ({ text: alertSummary(ctx.event), body: webhookBody(ctx, policy) }),
    };
  }

  async #legacyEmails(db: Db, ctx: AlertContext, skip: Set<string>, now: string): Promise<NewDelivery[]> {
    const pool = await poolLegacySettings(db, ctx.event.pool_id);
    if (pool === undefined || pool.notification_email === '') return [];
    if (!legacyFilterAllows(pool.notification_filter, ctx.event)) return [];
    const mail = legacyAlertEmail(ctx, this.#apiBase);
    const out: NewDelivery[] = [];
    for (const address of new Set(parseNotificationEmail(pool.notification_email))) {
      if (skip.has(address.toLowerCase())) continue;
      out.push(
        newDelivery({
          account_id: ctx.event.account_id,
          kind: 'legacy_email',
          dedupe_key: `legacy:${ctx.event.id}:${address.toLowerCase()}`,
          event_id: ctx.event.id,
          policy_id: null,
          mechanism_type: 'email',
          mechanism: address,
          payload: {
            name: `Pool ${pool.name} notification_email (legacy)`,
            description: 'Legacy per-pool notification email (deprecated)',
            alert_type: HEALTH_ALERT_TYPE,
            subject: mail.subject,
            text: mail.text,
          },
          created_at: now,
        }),
      );
    }
    return out;
  }
}
