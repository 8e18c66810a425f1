/**
 * What transaction alerts say (SPEC §19): the one-line summary, the webhook body (the Cloudflare shape
 * of every alert, `data` = the state change) and the email, laid out like chain-incident emails
 * (incident-messages.ts). Each state change is a one-off alert: ALERT_STATE_EVENT_START, its event's id
 * the correlation id. Pure.
 */
import { TRANSACTION_ALERT_TYPE, type TransactionAlertData } from '../ledger/types.js';
import { oneLine } from '../model/plain-text.js';
import type { EmailContent } from './messages.js';
import type { Policy } from './queries/alert-policies.js';

export interface TransactionAlert {
  accountId: string;
  /** The state change's event id. */
  correlationId: string;
  data: TransactionAlertData;
  /** RFC 3339: when the change was seen. */
  at: string;
}

const WHAT: Record<TransactionAlertData['status'], string> = {
  pending: 'is pending',
  included: 'was included',
  final: 'is final',
  replaced: 'was replaced',
  dropped: 'was dropped',
  reorged: 'was reorged out (pending again)',
};

export function transactionSummary(data: TransactionAlertData): string {
  const where = data.block_number === null ? '' : ` in block ${data.block_number}`;
  const by = data.replaced_by === null ? '' : ` by ${data.replaced_by}`;
  return `Transaction ${data.hash} on network "${oneLine(data.network)}" ${WHAT[data.status]}${where}${by}`;
}

export function transactionWebhookBody(
  alert: TransactionAlert,
  policy: Pick<Policy, 'id' | 'name' | 'account_id'>,
): string {
  return JSON.stringify({
    name: policy.name,
    text: transactionSummary(alert.data),
    data: alert.data,
    ts: Math.floor(Date.parse(alert.at) / 1000),
    account_id: policy.account_id,
    policy_id: policy.id,
    policy_name: policy.name,
    alert_type: TRANSACTION_ALERT_TYPE,
    alert_correlation_id: alert.correlationId,
    alert_event: 'ALERT_STATE_EVENT_START',
  });
}

export function transactionEmail(
  alert: TransactionAlert,
  policy: Pick<Policy, 'id' | 'name'>,
  apiBase: string,
): EmailContent {
  const { data } = alert;
  const lines = [
    `${transactionSummary(data)}.`,
    '',
    `  Network:     ${oneLine(data.network)}`,
    `  Transaction: ${data.hash}`,
    `  From:        ${data.from} (nonce ${data.nonce})`,
    `  Status:      ${data.status}${data.previous_status === null ? '' : ` (was ${data.previous_status})`}`,
    ...(data.block_number === null ? [] : [`  Block:       ${data.block_number} ${data.block_hash ?? ''}`.trimEnd()]),
    ...(data.replaced_by === null ? [] : [`  Replaced by: ${data.replaced_by}`]),
    ...(data.key_id === null ? [] : [`  Gateway key: ${data.key_id}`]),
    `  Time:        ${alert.at}`,
    `  Account:     ${alert.accountId}`,
    `  Alert:       ALERT_STATE_EVENT_START (correlation id ${alert.correlationId})`,
    '',
    `The record and its history: ${apiBase}/accounts/${alert.accountId}/gateway/transactions/${data.hash}`,
    '',
    `You receive this because the notification policy "${oneLine(policy.name)}" (${policy.id}) sends`,
    `${TRANSACTION_ALERT_TYPE} alerts to this address. To change or stop it, edit or delete the policy:`,
    `  ${apiBase}/accounts/${alert.accountId}/alerting/v3/policies/${policy.id}`,
    '',
  ];
  const short = `${data.hash.slice(0, 10)}…${data.hash.slice(-4)}`;
  return {
    subject: `[Switchyard] Transaction ${short} ${data.status} on ${oneLine(data.network)}`,
    text: lines.join('\n'),
  };
}
