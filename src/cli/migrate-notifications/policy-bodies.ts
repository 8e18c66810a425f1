/**
 * Account-level health policies as the migration sees them: the marker that lets a re-run find the
 * policies an earlier run created, the body of a policy for one (address set, filter) group, and the
 * coverage a policy provides once it has been read back.
 *
 * Marker: `switchyard-migration:<16 hex>` in the description (and in the name, in case someone edits
 * the description). The hex is a hash of the group key — the sorted address set plus the filter spec —
 * so it does not change when pools join the group. The pool set is deliberately not part of it: a
 * re-run extends the same policy (PUT) instead of creating a second one.
 */
import { createHash } from 'node:crypto';
import { type FilterSpec, specKey } from './legacy-filters.js';
import { listAll } from './pages.js';
import type { V4Client } from './v4-client.js';

export const ALERT_TYPE = 'load_balancing_health_alert';
const MARKER = /switchyard-migration:([0-9a-f]{16})/;

export interface ApiPolicy {
  id: string;
  name?: string;
  description?: string;
  enabled?: boolean;
  alert_type?: string;
  mechanisms?: { email?: Array<{ id?: unknown }>; webhooks?: Array<{ id?: unknown }>; [other: string]: unknown };
  filters?: Record<string, unknown>;
}

export interface PolicyBody {
  name: string;
  description: string;
  alert_type: string;
  enabled: boolean;
  mechanisms: { email: Array<{ id: string }>; webhooks?: Array<{ id: string }> };
  filters: Record<string, string[]>;
}

export function groupKey(addresses: readonly string[], spec: FilterSpec): string {
  const canonical = `v1|${addresses.join(',')}|${specKey(spec)}`;
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

export function markerOf(policy: ApiPolicy): string | undefined {
  return (
    MARKER.exec(typeof policy.description === 'string' ? policy.description : '')?.[1] ??
    MARKER.exec(typeof policy.name === 'string' ? policy.name : '')?.[1]
  );
}

export function policyName(addresses: readonly string[], spec: FilterSpec, key: string): string {
  const more = addresses.length > 1 ? ` +${addresses.length - 1}` : '';
  const scope = spec.event_source.length === 2 && spec.new_health.length === 2 ? '' : ` (${specKey(spec)})`;
  return `Pool health: ${addresses[0] ?? '?'}${more}${scope} [switchyard-migration:${key}]`;
}

export function policyDescription(key: string): string {
  return (
    "Created by `switchyard migrate-notifications` from pools' legacy notification_email. " +
    `Keep this marker so re-runs update this policy instead of creating another: switchyard-migration:${key}`
  );
}

/** Every policy of the account that carries a migration marker, keyed by marker (first one wins). */
export async function listMarkedPolicies(
  client: V4Client,
  accountId: string,
): Promise<{ byKey: Map<string, ApiPolicy>; duplicates: ApiPolicy[]; total: number }> {
  const path = `/accounts/${accountId}/alerting/v3/policies`;
  // Page 1 without parameters: a server that does not paginate policies gets the plain list call.
  const { items } = await listAll<ApiPolicy>(
    (page) => (page === 1 ? client.get(path) : client.get(path, { page })),
    'listing notification policies',
  );
  const byKey = new Map<string, ApiPolicy>();
  const duplicates: ApiPolicy[] = [];
  for (const policy of items) {
    const key = markerOf(policy);
    if (key === undefined) continue;
    if (byKey.has(key)) duplicates.push(policy);
    else byKey.set(key, policy);
  }
  return { byKey, duplicates, total: items.length };
}

function ids(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((item) => (item !== null && typeof item === 'object' ? (item as { id?: unknown }).id : undefined))
    .filter((id): id is string => typeof id === 'string');
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** Email ids of a policy, normalised like pool addresses. */
export function policyEmails(policy: ApiPolicy): string[] {
  return ids(policy.mechanisms?.email).map((address) => address.trim().toLowerCase());
}

export function policyWebhooks(policy: ApiPolicy): string[] {
  return ids(policy.mechanisms?.webhooks);
}

/** `undefined` = the filter is absent, which matches everything. */
export function policyFilter(policy: ApiPolicy, name: string): string[] | undefined {
  return strings(policy.filters?.[name]);
}

/**
 * What a read-back policy delivers: addresses × sources × healths for its pools. `null` sets mean "all"
 * (an omitted filter). Disabled policies and other alert types cover nothing.
 */
export interface Coverage {
  policyId: string;
  addresses: Set<string>;
  sources: Set<string> | null;
  healths: Set<string> | null;
  poolIds: Set<string> | null;
}

export function coverageOf(policy: ApiPolicy): Coverage | undefined {
  if (policy.enabled === false || policy.alert_type !== ALERT_TYPE) return undefined;
  const toSet = (list: string[] | undefined): Set<string> | null => (list === undefined ? null : new Set(list));
  return {
    policyId: policy.id,
    addresses: new Set(policyEmails(policy)),
    sources: toSet(policyFilter(policy, 'event_source')),
    healths: toSet(policyFilter(policy, 'new_health')),
    poolIds: toSet(policyFilter(policy, 'pool_id')),
  };
}

/** True when every (address, source, health) triple of the pool is delivered by some coverage. */
export function isCovered(poolId: string, triples: readonly string[], coverages: readonly Coverage[]): boolean {
  return triples.every((triple) => {
    const [address = '', source = '', health = ''] = triple.split('|');
    return coverages.some(
      (c) =>
        c.addresses.has(address) &&
        (c.sources === null || c.sources.has(source)) &&
        (c.healths === null || c.healths.has(health)) &&
        (c.poolIds === null || c.poolIds.has(poolId)),
    );
  });
}
