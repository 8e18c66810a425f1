/**
 * What a pool's legacy email means, in the terms of account-level policies.
 *
 * `notification_filter` (Cloudflare semantics): `{origin: {disable, healthy}, pool: {disable, healthy}}`,
 * each part optional or null. For each source (`origin`, `pool`):
 *   - `disable: true`   → events of that source are not emailed;
 *   - `healthy: true`   → only changes to Healthy; `false` → only changes to Unhealthy;
 *   - `healthy` null or absent → both.
 * A null or absent filter means both sources, both directions (the default).
 *
 * A policy's `new_health × event_source` is a cross product, so a pool whose two sources want different
 * directions needs two policies (one per source). `filterSpecs` returns the minimal list of specs.
 * A pool with both sources disabled gets no health email today and needs no policy.
 */
import type { NotificationFilter } from '../../model/pool-schema.js';

export type EventSource = 'origin' | 'pool';
export type Health = 'Healthy' | 'Unhealthy';

export const HEALTHS: readonly Health[] = ['Healthy', 'Unhealthy'];

export interface FilterSpec {
  /** Sorted, non-empty. */
  event_source: EventSource[];
  /** Sorted, non-empty. */
  new_health: Health[];
}

type SourceFilter = { disable?: boolean; healthy?: boolean | null } | null | undefined;

function healthsFor(part: SourceFilter): Health[] {
  if (part?.disable === true) return [];
  if (part?.healthy === true) return ['Healthy'];
  if (part?.healthy === false) return ['Unhealthy'];
  return [...HEALTHS];
}

export function filterSpecs(filter: NotificationFilter | null | undefined): FilterSpec[] {
  const origin = healthsFor(filter?.origin);
  const pool = healthsFor(filter?.pool);
  if (origin.length === 0 && pool.length === 0) return [];
  if (origin.length === 0) return [{ event_source: ['pool'], new_health: pool }];
  if (pool.length === 0) return [{ event_source: ['origin'], new_health: origin }];
  if (origin.join() === pool.join()) return [{ event_source: ['origin', 'pool'], new_health: origin }];
  return [
    { event_source: ['origin'], new_health: origin },
    { event_source: ['pool'], new_health: pool },
  ];
}

export function specLabel(spec: FilterSpec): string {
  return `${spec.event_source.join('+')} → ${spec.new_health.join('+')}`;
}

export function specKey(spec: FilterSpec): string {
  return `${spec.event_source.join('+')}/${spec.new_health.join('+')}`;
}

/** Comma-separated addresses → trimmed, lower-cased, de-duplicated, sorted. `""` → `[]`. */
export function normaliseAddresses(value: string | null | undefined): string[] {
  if (typeof value !== 'string') return [];
  const parts = value
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  return [...new Set(parts)].sort();
}

/**
 * The (address, source, health) triples a pool's legacy email delivers today. Coverage is checked
 * triple by triple, so it does not matter how policies split them up.
 */
export function requiredTriples(addresses: readonly string[], specs: readonly FilterSpec[]): string[] {
  const out: string[] = [];
  for (const spec of specs) {
    for (const address of addresses) {
      for (const source of spec.event_source) {
        for (const health of spec.new_health) out.push(`${address}|${source}|${health}`);
      }
    }
  }
  return out;
}
