/**
 * What chain-incident alerts say (SPEC §14): the one-line summary, the webhook body (the same Cloudflare
 * shape as health alerts) and the email, laid out like health alert emails (messages.ts). Pure.
 * Network and origin names come from config and the API's checked input; they are still shown through
 * `oneLine`.
 */
import type { IncidentData } from '../incidents/types.js';
import { INCIDENT_ALERT_TYPES } from '../incidents/types.js';
import { oneLine } from '../model/plain-text.js';
import type { EmailContent } from './messages.js';
import type { Policy } from './queries/alert-policies.js';

/** Short names for subjects (a folded Subject header is harder to scan). */
const LABELS: Record<IncidentData['kind'], string> = {
  head_stall: 'Head stall',
  finality_stall: 'Finality stall',
  origin_divergence: 'Origin divergence',
  reorg: 'Reorg',
  origin_integrity: 'Origin integrity',
};

export type IncidentAlertEvent = 'ALERT_STATE_EVENT_START' | 'ALERT_STATE_EVENT_END';

export interface IncidentAlert {
  accountId: string;
  correlationId: string;
  alertEvent: IncidentAlertEvent;
  data: IncidentData;
  /** RFC 3339: when it started (START, one-off) or ended (END). */
  at: string;
}

export function incidentSummary(alert: IncidentAlert): string {
  const { data } = alert;
  const network = `network "${oneLine(data.network)}"`;
  const ended = alert.alertEvent === 'ALERT_STATE_EVENT_END';
  switch (data.kind) {
    case 'head_stall':
      return ended
        ? `The head of ${network} advances again (block ${data.block_number})`
        : `The head of ${network} has not advanced since ${data.since} (block ${data.block_number})`;
    case 'finality_stall':
      return ended
        ? `The finalized block of ${network} advances again (block ${data.block_number})`
        : `The finalized block of ${network} has not advanced since ${data.since} (block ${data.block_number})`;
    case 'origin_divergence': {
      const origins = (data.origins ?? []).map((name) => `"${oneLine(name)}"`).join(', ');
      return ended
        ? `The healthy origins of ${network} agree again${data.block_number === undefined ? '' : ` at block ${data.block_number}`}`
        : `Origins ${origins} of ${network} report different hashes for block ${data.block_number}`;
    }
    case 'reorg':
      return `A reorg of depth ${data.depth} replaced blocks of ${network} from block ${data.block_number}`;
    case 'origin_integrity': {
      const origin = `Origin "${oneLine(data.origins?.[0] ?? '')}" of ${network}`;
      const block = data.block_number ?? data.block_hash;
      return ended
        ? `${origin} has answered nothing that failed verification since ${data.since}`
        : `${origin} answered ${oneLine(data.method ?? '')}${block === undefined ? '' : ` at block ${block}`} with an answer that failed verification (${oneLine(data.check ?? '')})`;
    }
  }
}

export function incidentWebhookBody(alert: IncidentAlert, policy: Pick<Policy, 'id' | 'name' | 'account_id'>): string {
  return JSON.stringify({
    name: policy.name,
    text: incidentSummary(alert),
    data: alert.data,
    ts: Math.floor(Date.parse(alert.at) / 1000),
    account_id: policy.account_id,
    policy_id: policy.id,
    policy_name: policy.name,
    alert_type: INCIDENT_ALERT_TYPES[alert.data.kind],
    alert_correlation_id: alert.correlationId,
    alert_event: alert.alertEvent,
  });
}

export function incidentEmail(
  alert: IncidentAlert,
  policy: Pick<Policy, 'id' | 'name'>,
  apiBase: string,
): EmailContent {
  const { data } = alert;
  const ended = alert.alertEvent === 'ALERT_STATE_EVENT_END';
  const state = data.kind === 'reorg' ? 'reorg' : ended ? 'resolved' : 'started';
  const lines = [
    `${incidentSummary(alert)}.`,
    '',
    `  Network:     ${oneLine(data.network)}`,
    `  Incident:    ${INCIDENT_ALERT_TYPES[data.kind]} (${state})`,
    ...(data.block_number === undefined ? [] : [`  Block:       ${data.block_number}`]),
    ...(data.depth === undefined ? [] : [`  Depth:       ${data.depth} blocks`]),
    ...Object.entries(data.hashes ?? {}).map(([origin, hash]) => `  Origin:      ${oneLine(origin)}: ${hash}`),
    ...(data.pool_ids === undefined || data.pool_ids.length === 0
      ? []
      : [`  Pools:       ${data.pool_ids.join(', ')}`]),
    ...(data.since === undefined ? [] : [`  Since:       ${data.since}`]),
    `  Time:        ${alert.at}`,
    `  Account:     ${alert.accountId}`,
    `  Alert:       ${alert.alertEvent} (correlation id ${alert.correlationId})`,
    '',
    `You receive this because the notification policy "${oneLine(policy.name)}" (${policy.id}) sends`,
    `${INCIDENT_ALERT_TYPES[data.kind]} alerts to this address. To change or stop it, edit or delete the policy:`,
    `  ${apiBase}/accounts/${alert.accountId}/alerting/v3/policies/${policy.id}`,
    '',
  ];
  const what =
    data.kind === 'reorg'
      ? `Reorg of depth ${data.depth} on ${oneLine(data.network)}`
      : `${LABELS[data.kind]} on ${oneLine(data.network)}${ended ? ' resolved' : ''}`;
  return { subject: `[Switchyard] ${what}`, text: lines.join('\n') };
}
