/**
 * Chain incidents → deliveries (SPEC §14), beside the health-event dispatcher (dispatcher.ts) and into the
 * same durable outbox, so webhooks (signed), email, retries and history work exactly as for health alerts.
 *
 * For each incident whose START (or, once closed, END) is not yet dispatched (incidents/queries.ts), one
 * transaction claims it (flag 0 → 1, compare-and-set: with several processes only one claims it) and
 * writes every delivery it raises: for each account with a pool of the network (the incident's scope),
 * every enabled policy of the kind's alert type whose filters match — `network` contains the network,
 * `pool_id` contains one of the account's pools there (an omitted filter matches everything) — gets one
 * delivery per email address and webhook destination. The incident id is the alert's correlation id, so
 * START and END share it; a reorg is a one-off (START only).
 *
 * What an account sees: `pool_ids` are its own pools of the network, and a divergence names only the
 * origins of its own pools (incidents/account-view.ts). The START is dispatched before the END.
 */
import type { Clock } from '../clock.js';
import { accountShare, dataForAccount } from '../incidents/account-view.js';
import { claimDispatch, undispatchedIncidents } from '../incidents/queries.js';
import { INCIDENT_ALERT_TYPES, type IncidentData, type IncidentRecord } from '../incidents/types.js';
import type { Logger } from '../log.js';
import type { Db, Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { policyAlertRows } from './delivery-rows.js';
import { type IncidentAlert, incidentEmail, incidentSummary, incidentWebhookBody } from './incident-messages.js';
import { enabledPolicies, type Policy } from './queries/alert-policies.js';
import { insertDeliveries, type NewDelivery } from './queries/outbox.js';

const BATCH = 100;

export interface IncidentDispatchOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  apiBase: string;
}

/** Does the policy want this incident for an account whose pools of the network are `poolIds`? */
export function incidentPolicyMatches(
  policy: Policy,
  data: Pick<IncidentData, 'network' | 'kind'>,
  poolIds: readonly string[],
): boolean {
  if (!policy.enabled || policy.alert_type !== INCIDENT_ALERT_TYPES[data.kind]) return false;
  const { network, pool_id } = policy.filters;
  return (
    (network === undefined || network.includes(data.network)) &&
    (pool_id === undefined || pool_id.some((id) => poolIds.includes(id)))
  );
}

export class IncidentDispatch {
  readonly #options: IncidentDispatchOptions;

  constructor(options: IncidentDispatchOptions) {
    this.#options = options;
  }

  /** Dispatches every undispatched START and END; returns how many were turned into deliveries. */
  async pass(): Promise<number> {
    const { store } = this.#options;
    let total = 0;
    for (const incident of await undispatchedIncidents(store.db, BATCH)) {
      if (!incident.start_dispatched && (await this.#dispatch(incident, 'start'))) total += 1;
      if (incident.status === 'closed' && !incident.end_dispatched && (await this.#dispatch(incident, 'end')))
        total += 1;
    }
    return total;
  }

  async #dispatch(incident: IncidentRecord, which: 'start' | 'end'): Promise<boolean> {
    let claimed = false;
    await this.#options.store.db.transaction().execute(async (trx) => {
      claimed = await claimDispatch(trx, incident.id, which);
      if (claimed) await insertDeliveries(trx, await this.#deliveries(trx, incident, which));
    });
    if (claimed)
      this.#options.logger.debug('dispatched chain incident', { id: incident.id, kind: incident.kind, which });
    return claimed;
  }

  async #deliveries(db: Db, incident: IncidentRecord, which: 'start' | 'end'): Promise<NewDelivery[]> {
    const now = timestamp(this.#options.clock);
    const data = which === 'end' ? (incident.end_data ?? incident.data) : incident.data;
    const at = which === 'end' ? (incident.closed_at ?? now) : incident.opened_at;
    const alertType = INCIDENT_ALERT_TYPES[incident.kind];
    const out: NewDelivery[] = [];
    for (const accountId of new Set(incident.scope.map((entry) => entry.account_id))) {
      const share = accountShare(incident.scope, accountId);
      const policies = (await enabledPolicies(db, accountId, alertType)).filter((policy) =>
        incidentPolicyMatches(policy, data, share.poolIds),
      );
      if (policies.length === 0) continue;
      const alert: IncidentAlert = {
        accountId,
        correlationId: incident.id,
        alertEvent: which === 'end' ? 'ALERT_STATE_EVENT_END' : 'ALERT_STATE_EVENT_START',
        data: dataForAccount(data, share),
        at,
      };
      for (const policy of policies) {
        out.push(
          ...policyAlertRows({
            accountId,
            eventId: incident.id,
            policy,
            alertType,
            key: `incident:${incident.id}:${which}:${policy.id}`,
            createdAt: now,
            mail: () => {
              const mail = incidentEmail(alert, policy, this.#options.apiBase);
              return { subject: mail.subject, text: mail.text };
            },
            webhook: () => ({ text: incidentSummary(alert), body: incidentWebhookBody(alert, policy) }),
          }),
        );
      }
    }
    return out;
  }
}
