/**
 * Which alerts a health event raises. Pure functions, no I/O.
 *
 * Account-level policies: an event matches an enabled `load_balancing_health_alert` policy of the pool's
 * account when every filter it has matches — `pool_id` contains the pool, `new_health` contains the new
 * status, `event_source` contains the kind of object. An omitted filter matches everything (so a policy
 * without `pool_id` also covers pools created later).
 *
 * Legacy per-pool email honours the pool's `notification_filter` (Cloudflare semantics), looked up by the
 * event's kind (`origin` or `pool`): `disable: true` sends nothing; `healthy: true` only when the object
 * becomes healthy, `healthy: false` only when it becomes unhealthy; `healthy` null or absent: both.
 */
import type { NotificationFilter } from '../model/pool-schema.js';
import type { HealthEventsTable } from '../store/tables/health.js';
import type { Policy } from './queries/alert-policies.js';

export const HEALTH_ALERT_TYPE = 'load_balancing_health_alert';

export type MatchableEvent = Pick<HealthEventsTable, 'pool_id' | 'new_health' | 'event_source'>;

export function policyMatches(policy: Policy, event: MatchableEvent): boolean {
  if (!policy.enabled || policy.alert_type !== HEALTH_ALERT_TYPE) return false;
  const { pool_id, new_health, event_source } = policy.filters;
  return (
    (pool_id === undefined || pool_id.includes(event.pool_id)) &&
    (new_health === undefined || new_health.includes(event.new_health)) &&
    (event_source === undefined || event_source.includes(event.event_source))
  );
}

export function legacyFilterAllows(filter: NotificationFilter | null | undefined, event: MatchableEvent): boolean {
  const rule = filter?.[event.event_source];
  if (rule === null || rule === undefined) return true;
  if (rule.disable === true) return false;
  if (rule.healthy === true) return event.new_health === 'Healthy';
  if (rule.healthy === false) return event.new_health === 'Unhealthy';
  return true;
}

/** Correlation key of the object an event is about: START and END of one object share an id. */
export function objectKey(event: Pick<HealthEventsTable, 'event_source' | 'pool_id' | 'origin_name'>): string {
  return event.event_source === 'pool' ? `pool:${event.pool_id}` : `origin:${event.pool_id}:${event.origin_name ?? ''}`;
}
