/**
 * What alerts say: the webhook body (Cloudflare shape) and the email subjects and bodies for policy
 * alerts, legacy per-pool email and deprecation notices. Pure functions of their inputs.
 *
 * Origin addresses can carry provider API keys, so messages show them through the one masking function
 * (model/origin-address.ts `maskAddress`: credentials, query values and key-like path segments as
 * `***`) — also for event rows written by older versions, which stored some addresses unmasked. Every
 * email says how to manage what caused it.
 *
 * Names, reasons and addresses are shown through `oneLine` (plain-text.ts): a control character stored
 * before input was checked (or in a probe's failure reason, which quotes what an origin answered) is
 * escaped, so no value can start a new line of an email or the webhook's `text`.
 */

import type { HealthEventRow } from '../health/events.js';
import { maskAddress } from '../model/origin-address.js';
import { oneLine } from '../model/plain-text.js';
import { HEALTH_ALERT_TYPE } from './matching.js';
import type { Policy } from './queries/alert-policies.js';

export type AlertEvent = 'ALERT_STATE_EVENT_START' | 'ALERT_STATE_EVENT_END';

export interface AlertContext {
  event: HealthEventRow;
  alertEvent: AlertEvent;
  correlationId: string;
}

export const DEPRECATION_ALERT_TYPE = 'load_balancing_notification_email_deprecation';

/** The event's free-text fields, each fit for one line. */
function shown(event: HealthEventRow) {
  return {
    pool: oneLine(event.pool_name),
    origin: oneLine(event.origin_name ?? '?'),
    reason: oneLine(event.reason),
  };
}

function objectLabel(event: HealthEventRow): string {
  const { pool, origin } = shown(event);
  return event.event_source === 'pool' ? `Pool "${pool}"` : `Origin "${origin}" in pool "${pool}"`;
}

/** One line: what changed. */
export function alertSummary(event: HealthEventRow): string {
  const was = event.previous === 'Unknown' ? 'at start' : `was ${event.previous}`;
  return `${objectLabel(event)} is ${event.new_health} (${was}): ${shown(event).reason}`;
}

/** The event as it appears in the webhook's `data`. */
export function eventData(event: HealthEventRow): Record<string, unknown> {
  return {
    event_id: event.id,
    event_source: event.event_source,
    pool_id: event.pool_id,
    pool_name: event.pool_name,
    ...(event.event_source === 'origin'
      ? {
          origin_name: event.origin_name,
          origin_address: event.origin_address === null ? null : maskAddress(event.origin_address),
        }
      : {}),
    previous: event.previous,
    new_health: event.new_health,
    reason: event.reason,
    occurred_at: event.occurred_at,
  };
}

/** The Cloudflare webhook body, as the exact JSON text that is POSTed (and signed) on every attempt. */
export function webhookBody(ctx: AlertContext, policy: Pick<Policy, 'id' | 'name' | 'account_id'>): string {
  return JSON.stringify({
    name: policy.name,
    text: alertSummary(ctx.event),
    data: eventData(ctx.event),
    ts: Math.floor(Date.parse(ctx.event.occurred_at) / 1000),
    account_id: policy.account_id,
    policy_id: policy.id,
    policy_name: policy.name,
    alert_type: HEALTH_ALERT_TYPE,
    alert_correlation_id: ctx.correlationId,
    alert_event: ctx.alertEvent,
  });
}

export const TEST_MESSAGE_BODY = JSON.stringify({
  text: 'Switchyard test message: this webhook destination is reachable. No action is needed.',
});

export interface EmailContent {
  subject: string;
  text: string;
}

function alertSubject(event: HealthEventRow): string {
  const { pool, origin } = shown(event);
  const what = event.event_source === 'pool' ? `Pool ${pool}` : `Origin ${origin} (pool ${pool})`;
  return `[Switchyard] ${what} is ${event.new_health}`;
}

function alertFacts(ctx: AlertContext): string[] {
  const { event } = ctx;
  const { pool, origin, reason } = shown(event);
  return [
    `${objectLabel(event)} changed health: ${event.previous} → ${event.new_health}.`,
    '',
    `  Pool:        ${pool} (${event.pool_id})`,
    ...(event.event_source === 'origin'
      ? [
          `  Origin:      ${origin}${event.origin_address === null ? '' : ` (${oneLine(maskAddress(event.origin_address))})`}`,
        ]
      : []),
    `  Change:      ${event.previous} → ${event.new_health}`,
    `  Reason:      ${reason}`,
    `  Time:        ${event.occurred_at}`,
    `  Account:     ${event.account_id}`,
    `  Alert:       ${ctx.alertEvent} (correlation id ${ctx.correlationId})`,
  ];
}

export function policyAlertEmail(
  ctx: AlertContext,
  policy: Pick<Policy, 'id' | 'name'>,
  apiBase: string,
): EmailContent {
  return alertEmail(ctx, [
    `You receive this because the notification policy "${oneLine(policy.name)}" (${policy.id}) sends load balancing`,
    'health alerts to this address. To change or stop it, edit or delete the policy:',
    `  ${apiBase}/accounts/${ctx.event.account_id}/alerting/v3/policies/${policy.id}`,
  ]);
}

export function legacyAlertEmail(ctx: AlertContext, apiBase: string): EmailContent {
  return alertEmail(ctx, [
    `You receive this because pool "${oneLine(ctx.event.pool_name)}" lists this address in its notification_email.`,
    'Per-pool notification_email is deprecated: create an account-level notification policy',
    `(POST ${apiBase}/accounts/${ctx.event.account_id}/alerting/v3/policies) and then set notification_email to ""`,
    'on every pool. A separate deprecation notice explains the steps.',
  ]);
}

/** An alert email: the facts, a blank line, then why the recipient gets it (`reason`). */
function alertEmail(ctx: AlertContext, reason: readonly string[]): EmailContent {
  return { subject: alertSubject(ctx.event), text: [...alertFacts(ctx), '', ...reason, ''].join('\n') };
}

export interface DeprecationNoticeInput {
  accountId: string;
  address: string;
  /** Names of the account's pools whose notification_email lists this address. */
  pools: string[];
  /** How many pools of the account still have a notification_email. */
  legacyPoolCount: number;
  intervalMs: number;
  apiBase: string;
}

function humanInterval(ms: number): string {
  if (ms % 86_400_000 === 0) return ms === 86_400_000 ? '24 hours' : `${ms / 86_400_000} days`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return `${ms / 60_000} minutes`;
  return `${Math.round(ms / 1000)} seconds`;
}

const MAX_LISTED = 50;

export function deprecationNoticeEmail(input: DeprecationNoticeInput): EmailContent {
  const base = `${input.apiBase}/accounts/${input.accountId}`;
  // A long list would bury the instructions: name the first MAX_LISTED pools and count the rest.
  const poolList = input.pools.slice(0, MAX_LISTED).map((name) => `  - ${oneLine(name)}`);
  if (input.pools.length > MAX_LISTED) {
    poolList.push(`  … and ${input.pools.length - MAX_LISTED} more (GET …/load_balancers/pools lists them all)`);
  }
  return {
    subject: `[Switchyard] Action needed: per-pool notification email is deprecated (account ${input.accountId})`,
    text: [
      `This address (${input.address}) receives load balancing health alerts through the legacy`,
      'notification_email field of these pools:',
      ...poolList,
      '',
      'Per-pool notification_email is deprecated. Health alerts now come from account-level notification',
      'policies, which cover many pools at once and can deliver by webhook as well as email.',
      `${input.legacyPoolCount} pool(s) of account ${input.accountId} still use notification_email, so the migration`,
      'is incomplete. To complete it:',
      '',
      '1. Create an account-level policy that keeps these recipients, for example:',
      `     POST ${base}/alerting/v3/policies`,
      `     {"name": "pool health", "alert_type": "load_balancing_health_alert", "enabled": true,`,
      `      "mechanisms": {"email": [{"id": "${input.address}"}]},`,
      '      "filters": {"new_health": ["Unhealthy", "Healthy"], "event_source": ["pool", "origin"]}}',
      '   (add "pool_id": [...] to the filters to limit it to some pools; leave it out to cover all of them).',
      '',
      '2. Clear notification_email on every pool with the bulk update:',
      `     PATCH ${base}/load_balancers/pools?page=1&per_page=25   body {"notification_email": ""}`,
      '   It changes only the pools on the requested page (the first 25 by name by default), so repeat it',
      '   for page=2, page=3, ... until a page returns no pools, or ask for a larger page (per_page up to 1000).',
      '   `switchyard migrate-notifications --account <id>` performs steps 1 and 2 for you.',
      '',
      `3. Check the result: GET ${base}/load_balancers/notification_migration reports "complete": true.`,
      '',
      `Until every pool of the account has an empty notification_email you will receive this notice at most`,
      `once every ${humanInterval(input.intervalMs)}. Once it is complete, no more notices are sent.`,
      '',
    ].join('\n'),
  };
}
