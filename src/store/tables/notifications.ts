/**
 * Row types of the notification tables. Owned by `src/notifications/`. Conventions as in core.ts: ids
 * text, timestamps RFC 3339 UTC text (so string comparison is time order), booleans 0/1, JSON as text.
 *
 * - `notification_policies`, `webhook_destinations`: the account-level configuration (Cloudflare shapes).
 * - `notification_deliveries`: the durable outbox. One row per (alert, mechanism), written before anything
 *   is sent; the sender claims due rows with a lease and marks them sent, retries or dead-letters them.
 * - `notification_cursor`: how far the dispatcher has read `health_events.seq`; advanced in the same
 *   transaction that writes the deliveries of the events it covers.
 * - `alert_correlations`: the open START per health object, so its recovery's END carries the same id.
 * - `notification_history`: what was sent (the `/alerting/v3/history` resource).
 * - `deprecation_notices`: when each legacy address of an account last got a deprecation notice.
 */

export type DeliveryKind = 'policy_alert' | 'legacy_email' | 'deprecation_notice';
export type MechanismType = 'email' | 'webhook';
/** pending → sent | dead (gave up after the retry window) | cancelled (target gone, or no longer wanted). */
export type DeliveryStatus = 'pending' | 'sent' | 'dead' | 'cancelled';

export interface NotificationPoliciesTable {
  id: string; // uuid
  account_id: string;
  name: string;
  description: string;
  enabled: number; // 0 | 1
  alert_type: string;
  mechanisms: string; // JSON: { email?: [{id}], webhooks?: [{id}] }
  filters: string; // JSON: Record<string, string[]>
  alert_interval: string | null; // stored and returned, never used: each health change is alerted once, at once
  created: string;
  modified: string;
}

export interface WebhookDestinationsTable {
  id: string; // uuid
  account_id: string;
  name: string;
  /** The URL, masked when `sealed` holds its secret parts (model/origin-address.ts maskAddress). */
  url: string;
  /**
   * Write-only: used for cf-webhook-auth and the Standard Webhooks signature, never returned or logged.
   * Null once sealed (then in `sealed`); rows written before migration 010 hold it until the next start.
   */
  secret: string | null;
  /** The URL and secret sealed (store/secret-box.ts), JSON {url?, secret?}; null when nothing is secret. */
  sealed: string | null;
  type: string; // "generic"
  created_at: string;
  last_success: string | null;
  last_failure: string | null;
}

export interface NotificationDeliveriesTable {
  id: string; // uuid
  account_id: string;
  kind: DeliveryKind;
  /** Unique: the same alert never yields two deliveries to one mechanism, even if a pass is repeated. */
  dedupe_key: string;
  event_id: string | null; // health_events.id for alerts and legacy email
  policy_id: string | null;
  mechanism_type: MechanismType;
  mechanism: string; // email address or webhook destination id
  /** Standard Webhooks `webhook-id` (and email Message-ID): the same on every attempt. */
  message_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  /** Lease: while in the future, one sender owns the row. */
  locked_until: string | null;
  locked_by: string | null;
  last_error: string | null;
  payload: string; // JSON: DeliveryPayload
  created_at: string;
  sent_at: string | null;
}

export interface NotificationCursorTable {
  name: string; // "dispatcher"
  seq: number;
}

export interface AlertCorrelationsTable {
  account_id: string;
  object_key: string; // "pool:<pool_id>" or "origin:<pool_id>:<origin_name>"
  correlation_id: string;
  opened_at: string;
}

export interface NotificationHistoryTable {
  id: string; // uuid
  account_id: string;
  delivery_id: string;
  policy_id: string | null; // null for legacy per-pool email and deprecation notices
  name: string;
  description: string;
  alert_body: string;
  alert_type: string;
  mechanism: string;
  mechanism_type: MechanismType;
  sent: string;
}

export interface DeprecationNoticesTable {
  account_id: string;
  address: string; // lower-cased
  last_sent_at: string; // when the last notice was queued
}

export interface NotificationTables {
  notification_policies: NotificationPoliciesTable;
  webhook_destinations: WebhookDestinationsTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_cursor: NotificationCursorTable;
  alert_correlations: AlertCorrelationsTable;
  notification_history: NotificationHistoryTable;
  deprecation_notices: DeprecationNoticesTable;
}
