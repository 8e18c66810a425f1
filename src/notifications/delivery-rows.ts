/**
 * New outbox rows (queries/outbox.ts `NewDelivery`), built in one place. Each row gets a fresh id and
 * the message id derived from it (`msg_` and the id's 32 hex digits): the Standard Webhooks
 * `webhook-id` and the email Message-ID, the same on every attempt of that delivery.
 *
 * A policy's alert — for a health event (dispatcher.ts), a chain incident (incident-dispatch.ts) or a
 * transaction's state change (transaction-dispatch.ts) — is one row per email address and per webhook destination of the policy, emails first, with dedupe
 * keys `<key>:email:<address, lowercased>` and `<key>:webhook:<destination id>` under the caller's
 * `key`, so repeating a pass never queues an alert twice.
 */
import { randomUUID } from 'node:crypto';
import type { Policy } from './queries/alert-policies.js';
import type { NewDelivery } from './queries/outbox.js';

/** The `msg_…` message id of the delivery (or test message) with this UUID. */
export function messageIdOf(id: string): string {
  return `msg_${id.replaceAll('-', '')}`;
}

/** A row with a fresh id and its message id. */
export function newDelivery(fields: Omit<NewDelivery, 'id' | 'message_id'>): NewDelivery {
  const id = randomUUID();
  return { ...fields, id, message_id: messageIdOf(id) };
}

export interface PolicyAlert {
  accountId: string;
  /** What the alert is about: the health event's, the incident's or the ledger state change's id. */
  eventId: string;
  policy: Policy;
  /** The policy's alert type, written into each payload. */
  alertType: string;
  /** The dedupe key of this alert for this policy, before `:email:…` / `:webhook:…`. */
  key: string;
  createdAt: string;
  /** The email every address of the policy gets (asked once, only when the policy has addresses). */
  mail(): { subject: string; text: string };
  /** The webhook's one-line text and exact body (asked once, only when the policy has destinations). */
  webhook(): { text: string; body: string };
}

/** The rows of one policy's alert: one per email address, then one per webhook destination. */
export function policyAlertRows(alert: PolicyAlert): NewDelivery[] {
  const { policy } = alert;
  const emails = policy.mechanisms.email ?? [];
  const webhooks = policy.mechanisms.webhooks ?? [];
  const row = (
    mechanism_type: 'email' | 'webhook',
    mechanism: string,
    dedupe: string,
    content: { text: string; subject?: string; body?: string },
  ) =>
    newDelivery({
      account_id: alert.accountId,
      kind: 'policy_alert',
      dedupe_key: `${alert.key}:${mechanism_type}:${dedupe}`,
      event_id: alert.eventId,
      policy_id: policy.id,
      mechanism_type,
      mechanism,
      payload: { name: policy.name, description: policy.description, alert_type: alert.alertType, ...content },
      created_at: alert.createdAt,
    });
  const rows: NewDelivery[] = [];
  if (emails.length > 0) {
    const mail = alert.mail();
    for (const { id: address } of emails) rows.push(row('email', address, address.toLowerCase(), mail));
  }
  if (webhooks.length > 0) {
    const hook = alert.webhook();
    for (const { id: destination } of webhooks) rows.push(row('webhook', destination, destination, hook));
  }
  return rows;
}
