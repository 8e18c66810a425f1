/**
 * Row types of the health tables. Owned by `src/health/`. `health_events` is the hand-off to the
 * notification dispatcher: one row per change of an established health state, written in the same
 * transaction as the state change, consumed in `seq` order.
 *
 * `origin_health` and `pool_health` hold the live, shared state (docs/health.md explains the design):
 * every state write compares-and-sets `generation`, so with several processes on one PostgreSQL exactly one
 * writer records a change and its event.
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

/** Live state of one monitored origin; the key is (pool_id, origin_name). */
export interface OriginHealthTable {
  pool_id: string;
  origin_name: string;
  /**
   * The masked address (model/origin-address.ts maskAddress) the state was measured at: a change of
   * scheme, host, port, path or query names resets the state; new credentials alone do not. Never the full
   * address, which may carry credentials.
   */
  origin_address: string;
  status: HealthStatus | 'Unknown';
  failures: number; // consecutive failed checks
  successes: number; // consecutive passed checks
  last_ok: number; // 0 | 1: the latest check passed
  failure_reason: string; // of the latest check; "" when it passed
  response_code: number | null;
  rtt_ms: number | null;
  checked_at: string; // RFC 3339: when the latest check started
  changed_at: string | null; // RFC 3339: when `status` last changed
  generation: number; // +1 on every write (compare-and-set)
}

/** Live state of one pool plus its checker lease (only the lease holder probes the pool). */
export interface PoolHealthTable {
  pool_id: string;
  account_id: string;
  status: HealthStatus | 'Unknown';
  changed_at: string | null;
  generation: number;
  lease_owner: string | null;
  lease_until: string | null; // RFC 3339 (toISOString, so text order is time order)
}

export interface HealthTables {
  health_events: HealthEventsTable;
  origin_health: OriginHealthTable;
  pool_health: PoolHealthTable;
}
