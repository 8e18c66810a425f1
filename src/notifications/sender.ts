/**
 * The sender: claims due deliveries from the outbox and sends them, at least once.
 *
 * A pass claims up to BATCH due pending deliveries with a lease (`locked_until` = now + leaseMs; on
 * PostgreSQL the claim uses FOR UPDATE SKIP LOCKED, so several processes never claim one row), sends
 * them concurrently, and for each: marks it sent and appends it to history (one transaction), or records
 * the failure and schedules the next attempt by the back-off in backoff.ts, or dead-letters it once its
 * 24 h retry window is over (logged as an error). A process that dies mid-send leaves its lease to expire,
 * then the delivery is sent again — at-least-once, with the same webhook-id / Message-ID.
 *
 * Failures that look permanent — an SMTP 5xx reply (bad recipient, authentication or relay refused) or a
 * webhook 4xx other than 408/429 — are retried on the same schedule, not dead-lettered early: they are
 * usually a mail or receiver setup the operator can fix within the window, and "no alert may be lost"
 * outweighs ~34 wasted attempts. They are logged at `error` (not `warn`) from the first attempt, so the
 * operator hears about them at once.
 *
 * Before sending, a delivery is dropped (`cancelled`) when it can no longer be delivered or wanted: its
 * webhook destination was deleted, or — for a deprecation notice — the address no longer appears in any
 * pool's notification_email of the account (the migration is done for it).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { parseNotificationEmail } from '../model/pool-schema.js';
import { poolsWithLegacyEmail } from '../pools/legacy-email.js';
import type { Store } from '../store/database.js';
import type { Opener } from '../store/store-secrets.js';
import { retryDelayMs, retryWindowOver } from './backoff.js';
import { type Mailer, SmtpTlsRequiredError } from './mailer.js';
import { getDestinationTarget, recordDestinationOutcome } from './queries/destinations.js';
import {
  claimDueDeliveries,
  type DeliveryPayload,
  type DeliveryRow,
  finishDelivery,
  markDeliverySent,
  scheduleRetry,
} from './queries/outbox.js';
import type { WebhookClient } from './webhook.js';

const BATCH = 20;

export interface SenderOptions {
  store: Store;
  /** Opens the destinations' sealed URLs and secrets. */
  secrets: Opener;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  webhooks: WebhookClient;
  /** Identifies this process's leases. */
  owner: string;
  leaseMs: number;
  /** Jitter source, [0, 1). */
  random?: () => number;
  /** Called once per attempt with its outcome (metrics). */
  onOutcome?: (outcome: AttemptOutcome, mechanismType: string) => void;
}

export type AttemptOutcome = 'sent' | 'retry' | 'dead' | 'cancelled';

type Outcome =
  | { ok: true }
  | { ok: false; error: string; retryAfterMs?: number; permanent?: boolean }
  | { cancel: string };

export class DeliverySender {
  readonly #o: Required<SenderOptions>;

  constructor(options: SenderOptions) {
    this.#o = { random: Math.random, onOutcome: () => {}, ...options };
  }

  /** Sends every delivery due now (batch after batch). Returns how many were attempted. */
  async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.#o.clock.now();
      const claimed = await claimDueDeliveries(
        this.#o.store.db,
        this.#o.store.dialect,
        this.#o.owner,
        iso(now),
        iso(now + this.#o.leaseMs),
        BATCH,
      );
      if (claimed.length === 0) return total;
      await Promise.all(claimed.map((row) => this.#deliver(row)));
      total += claimed.length;
    }
  }

  async #deliver(row: DeliveryRow): Promise<void> {
    const { store, owner, logger } = this.#o;
    const payload = JSON.parse(row.payload) as DeliveryPayload;
    const fields = {
      delivery_id: row.id,
      kind: row.kind,
      mechanism_type: row.mechanism_type,
      mechanism: row.mechanism,
      attempt: row.attempts + 1,
    };
    let outcome: Outcome;
    try {
      outcome =
        row.mechanism_type === 'webhook' ? await this.#sendWebhook(row, payload) : await this.#sendEmail(row, payload);
    } catch (err) {
      outcome = { ok: false, error: `internal error: ${(err as Error).message}` };
    }
    const now = this.#o.clock.now();
    if ('cancel' in outcome) {
      await finishDelivery(store.db, row, owner, 'cancelled', outcome.cancel, false);
      logger.info('notification cancelled', { ...fields, reason: outcome.cancel });
      this.#o.onOutcome('cancelled', row.mechanism_type);
      return;
    }
    if (outcome.ok) {
      const recorded = await markDeliverySent(store.db, row, owner, iso(now), {
        id: randomUUID(),
        account_id: row.account_id,
        delivery_id: row.id,
        policy_id: row.policy_id,
        name: payload.name,
        description: payload.description,
        alert_body: payload.body ?? payload.text,
        alert_type: payload.alert_type,
        mechanism: row.mechanism,
        mechanism_type: row.mechanism_type,
      });
      logger.info('notification sent', { ...fields, ...(recorded ? {} : { note: 'lease lost; sent twice' }) });
      this.#o.onOutcome('sent', row.mechanism_type);
      return;
    }
    if (retryWindowOver(Date.parse(row.created_at), now)) {
      await finishDelivery(store.db, row, owner, 'dead', outcome.error, true);
      logger.error('notification dead-lettered after its retry window', { ...fields, error: outcome.error });
      this.#o.onOutcome('dead', row.mechanism_type);
      return;
    }
    const delay = retryDelayMs(row.attempts + 1, this.#o.random(), outcome.retryAfterMs);
    await scheduleRetry(store.db, row, owner, iso(now + delay), outcome.error);
    if (outcome.permanent === true) {
      logger.error('notification attempt failed with a permanent-looking error; will retry, check the setup', {
        ...fields,
        error: outcome.error,
        retry_in_ms: delay,
      });
    } else {
      logger.warn('notification attempt failed; will retry', { ...fields, error: outcome.error, retry_in_ms: delay });
    }
    this.#o.onOutcome('retry', row.mechanism_type);
  }

  async #sendWebhook(row: DeliveryRow, payload: DeliveryPayload): Promise<Outcome> {
    const { store, secrets, webhooks, clock } = this.#o;
    const target = await getDestinationTarget(store.db, secrets, row.mechanism);
    if (target === undefined || target.account_id !== row.account_id)
      return { cancel: 'webhook destination was deleted' };
    const result = await webhooks.post({
      accountId: row.account_id,
      url: target.url,
      body: payload.body ?? JSON.stringify({ text: payload.text }),
      messageId: row.message_id,
      secret: target.secret,
      timestamp: Math.floor(clock.now() / 1000),
    });
    await recordDestinationOutcome(store.db, row.mechanism, result.ok, iso(clock.now()));
    if (result.ok) return { ok: true };
    const status = result.status;
    const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    return {
      ok: false,
      error: result.error,
      ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
      ...(permanent ? { permanent } : {}),
    };
  }

  async #sendEmail(row: DeliveryRow, payload: DeliveryPayload): Promise<Outcome> {
    const { store, mailer } = this.#o;
    if (row.kind === 'deprecation_notice') {
      const address = row.mechanism.toLowerCase();
      const pools = await poolsWithLegacyEmail(store.db, row.account_id);
      const listed = pools.some((pool) =>
        parseNotificationEmail(pool.notification_email).some((a) => a.toLowerCase() === address),
      );
      if (!listed) return { cancel: 'the address no longer appears in any notification_email of the account' };
    }
    try {
      await mailer.send({
        to: row.mechanism,
        subject: payload.subject ?? payload.name,
        text: payload.text,
        messageId: row.message_id,
        date: new Date(row.created_at),
      });
      return { ok: true };
    } catch (err) {
      const responseCode = (err as { responseCode?: unknown }).responseCode;
      // A server that will not encrypt for our credentials is a setup error like a refused AUTH: loud at once.
      const permanent =
        err instanceof SmtpTlsRequiredError ||
        (typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600);
      return { ok: false, error: mailError(err), ...(permanent ? { permanent } : {}) };
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A short, secret-free description of a mail failure (nodemailer errors carry code and SMTP reply). */
function mailError(err: unknown): string {
  if (!(err instanceof Error)) return 'email failed';
  if (err instanceof SmtpTlsRequiredError) return `${err.code}: ${err.message}`;
  const code = (err as { code?: unknown }).code;
  const responseCode = (err as { responseCode?: unknown }).responseCode;
  const parts = [
    typeof code === 'string' ? code : 'EMAIL',
    typeof responseCode === 'number' ? `SMTP ${responseCode}` : '',
  ];
  return parts.filter((part) => part !== '').join(' ');
}
