import type { HealthStatus } from '../store/tables/health.js';

/**
 * The health state machines, pure.
 *
 * Origin: `Unknown` until its first state is established, then `Healthy` / `Unhealthy`.
 * - A failed check resets the pass streak and adds to the fail streak; `consecutive_down` failed checks
 *   in a row (0 counts as 1) make it Unhealthy.
 * - A passed check resets the fail streak; `consecutive_up` passes in a row (0 counts as 1) make it Healthy.
 * - The same thresholds decide the first state from Unknown.
 *
 * Pool: Healthy while at least `minimum_origins` enabled origins are Healthy; Unhealthy once even the
 * origins still Unknown could not reach that number; Unknown in between (only right after start).
 *
 * Events: every change of an established state; the first state (from Unknown) only when Unhealthy.
 */
export type StateName = HealthStatus | 'Unknown';

export interface OriginCounters {
  status: StateName;
  failures: number;
  successes: number;
}

export interface Thresholds {
  consecutive_up: number;
  consecutive_down: number;
}

export interface Change {
  previous: StateName;
  next: HealthStatus;
  /** Whether the change becomes a health event (not for the first state when it is Healthy). */
  event: boolean;
}

export function nextOriginCounters(
  state: OriginCounters,
  ok: boolean,
  thresholds: Thresholds,
): { state: OriginCounters; change?: Change } {
  const failures = ok ? 0 : state.failures + 1;
  const successes = ok ? state.successes + 1 : 0;
  let status = state.status;
  if (ok && status !== 'Healthy' && successes >= Math.max(1, thresholds.consecutive_up)) status = 'Healthy';
  if (!ok && status !== 'Unhealthy' && failures >= Math.max(1, thresholds.consecutive_down)) status = 'Unhealthy';
  const next = { status, failures, successes };
  if (status === state.status || status === 'Unknown') return { state: next };
  return { state: next, change: change(state.status, status) };
}

export function poolStatus(originStatuses: readonly StateName[], minimumOrigins: number): StateName {
  const healthy = originStatuses.filter((status) => status === 'Healthy').length;
  const unknown = originStatuses.filter((status) => status === 'Unknown').length;
  if (healthy >= minimumOrigins) return 'Healthy';
  if (healthy + unknown < minimumOrigins) return 'Unhealthy';
  return 'Unknown';
}

export function change(previous: StateName, next: HealthStatus): Change {
  return { previous, next, event: !(previous === 'Unknown' && next === 'Healthy') };
}

export function poolReason(healthy: number, enabled: number, minimumOrigins: number, status: HealthStatus): string {
  const counted = `${healthy} of ${enabled} enabled origin${enabled === 1 ? '' : 's'} healthy`;
  return status === 'Healthy'
    ? `${counted} (minimum_origins ${minimumOrigins})`
    : `${counted}, fewer than minimum_origins ${minimumOrigins}`;
}
