/**
 * Ledger state changes → deliveries (SPEC §19), beside the health and incident dispatchers and into the
 * same durable outbox, so webhooks (signed), email, retries and history work exactly as for every alert.
 *
 * For each undispatched event of the ledger (ledger/event-queries.ts, oldest first, BATCH at a time),
 * one transaction claims it (`dispatched` 0 → 1, compare-and-set: with several processes only one claims
 * it) and writes every delivery it raises: each enabled `switchyard_transaction_alert` policy of the
 * record's account whose filters all match — `network` contains the network, `key_id` the gateway key the
 * transaction was sent with (a send without a key matches no `key_id` filter), `status` the change
 * (`included`, `final`, `replaced`, `dropped`, `reorged`); an omitted filter matches everything — gets
 * one delivery per email address and webhook destination. Every change is a one-off alert (START only);
 * its event's id is the correlation id.
 */
import type { Clock } from '../clock.js';
import { claimEvent, type LedgerEvent, undispatchedEvents } from '../ledger/event-queries.js';
import { TRANSACTION_ALERT_TYPE, type TransactionAlertData } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { Db, Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { policyAlertRows } from './delivery-rows.js';
import { enabledPolicies, type Policy } from './queries/alert-policies.js';
import { insertDeliveries, type NewDelivery } from './queries/outbox.js';
import {
  type TransactionAlert,
  transactionEmail,
  transactionSummary,
  transactionWebhookBody,
} from './transaction-messages.js';

const BATCH = 100;

export interface TransactionDispatchOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  apiBase: string;
}

/** Does the policy want this state change? */
export function transactionPolicyMatches(policy: Policy, data: TransactionAlertData): boolean {
  if (!policy.enabled || policy.alert_type !== TRANSACTION_ALERT_TYPE) return false;
  const { network, key_id, status } = policy.filters;
  return (
    (network === undefined || network.includes(data.network)) &&
    (key_id === undefined || (data.key_id !== null && key_id.includes(data.key_id))) &&
    (status === undefined || status.includes(data.status))
  );
}

export class TransactionDispatch {
  readonly #options: TransactionDispatchOptions;

  constructor(options: TransactionDispatchOptions) {
    this.#options = options;
  }

  /** Dispatches every undispatched state change; returns how many were claimed here. */
  async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const events = await undispatchedEvents(this.#options.store.db, BATCH);
      let claimed = 0;
      for (const event of events) if (await this.#dispatch(event)) claimed += 1;
      total += claimed;
      if (events.length < BATCH || claimed === 0) return total;
    }
  }

  async #dispatch(event: LedgerEvent): Promise<boolean> {
    let claimed = false;
    await this.#options.store.db.transaction().execute(async (trx) => {
      claimed = await claimEvent(trx, event.id);
      if (claimed) await insertDeliveries(trx, await this.#deliveries(trx, event));
    });
    if (claimed) this.#options.logger.debug('dispatched transaction change', { id: event.id, status: event.status });
    return claimed;
  }

  async #deliveries(db: Db, event: LedgerEvent): Promise<NewDelivery[]> {
    const policies = (await enabledPolicies(db, event.accountId, TRANSACTION_ALERT_TYPE)).filter((policy) =>
      transactionPolicyMatches(policy, event.data),
    );
    const createdAt = timestamp(this.#options.clock);
    const alert: TransactionAlert = {
      accountId: event.accountId,
      correlationId: event.id,
      data: event.data,
      at: event.at,
    };
    return policies.flatMap((policy) =>
      policyAlertRows({
        accountId: event.accountId,
        eventId: event.id,
        policy,
        alertType: TRANSACTION_ALERT_TYPE,
        key: `transaction:${event.id}:${policy.id}`,
        createdAt,
        mail: () => {
          const mail = transactionEmail(alert, policy, this.#options.apiBase);
          return { subject: mail.subject, text: mail.text };
        },
        webhook: () => ({ text: transactionSummary(event.data), body: transactionWebhookBody(alert, policy) }),
      }),
    );
  }
}
