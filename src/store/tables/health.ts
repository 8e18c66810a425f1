/**
 * Row types of the health tables. Owned by `src/health/`. `health_events` is the hand-off to the
 * notification dispatcher: one row per change of an established health state, written in the same
 * transaction as the state change, consumed in `seq` order.
 */
import type { Generated } from 'kysely';

export type HealthStatus = 'Healthy' | 'Unhealthy';

export interface HealthEventsTable {
  seq: Generated<number>; // monotonically increasing; consumers keep a cursor on it
  id: string; // uuid
  account_id: string;
  event_source: 'origin' | 'pool';
  pool_id: string;
  pool_name: string;
  origin_name: string | null;
  origin_address: string | null;
  /** 'Unknown' only for the first state after start, which raises an event only when Unhealthy. */
  previous: HealthStatus | 'Unknown';
  new_health: HealthStatus;
  reason: string;
  occurred_at: string; // RFC 3339
}

export interface HealthTables {
  health_events: HealthEventsTable;
}
