/**
 * The planner: from the account's pools and the policies earlier runs left behind, decide which policies
 * to create, which to extend, and which already do the job. Pure (no I/O), so it is unit-tested directly.
 *
 * Grouping: pools with a non-empty `notification_email` are grouped by their normalised address set
 * (trimmed, lower-cased, de-duplicated, sorted) and by each filter spec the pool needs (see filter-affinity.ts);
 * one policy per (address set, spec). A marked policy found for a group is kept when it already covers
 * the group, and otherwise updated with PUT: its pool ids become (its ids that still exist) ∪ (the group),
 * addresses, webhooks, `new_health` and `event_source` are widened to what the group needs, and it is
 * enabled. Pools already cleared by an earlier run stay in the policy, so they never lose coverage.
 */
import type { NotificationFilter } from '../../model/pool-schema.js';
import { type FilterSpec, filterSpecs, normaliseAddresses, specKey } from './legacy-filters.js';
import {
  ALERT_TYPE,
  type ApiPolicy,
  groupKey,
  type PolicyBody,
  policyDescription,
  policyEmails,
  policyFilter,
  policyName,
  policyWebhooks,
} from './policy-bodies.js';

/** The fields of a listed pool the migration reads. */
export interface PoolRecord {
  id: string;
  name?: string;
  notification_email?: string | null;
  notification_filter?: NotificationFilter | null;
}

export interface LegacyPool {
  id: string;
  name: string;
  addresses: string[];
  /** Empty when the filter disables both sources: the email gets no health alerts today. */
  specs: FilterSpec[];
}

export interface PlannedPolicy {
  key: string;
  addresses: string[];
  spec: FilterSpec;
  /** Legacy pools of this run that need this policy. */
  pools: Array<{ id: string; name: string }>;
  action: 'create' | 'update' | 'keep';
  /** Why an existing policy needs an update (for the plan table). */
  reasons: string[];
  existing?: ApiPolicy;
  /** The body to POST (create) or PUT (update); for `keep`, what the policy is expected to contain. */
  body: PolicyBody;
}

export interface Plan {
  poolCount: number;
  legacy: LegacyPool[];
  policies: PlannedPolicy[];
  /** Extra marked policies with a key already taken (left alone; reported). */
  duplicates: ApiPolicy[];
  /** How many policies of the account carry a migration marker (earlier runs). */
  marked: number;
}

export interface PlanOptions {
  webhookId?: string;
}

export function legacyPools(pools: readonly PoolRecord[]): LegacyPool[] {
  return pools
    .map((pool) => ({
      id: pool.id,
      name: pool.name ?? pool.id,
      addresses: normaliseAddresses(pool.notification_email),
      specs: filterSpecs(pool.notification_filter),
    }))
    .filter((pool) => pool.addresses.length > 0);
}

export function buildPlan(
  pools: readonly PoolRecord[],
  marked: { byKey: ReadonlyMap<string, ApiPolicy>; duplicates: readonly ApiPolicy[] },
  options: PlanOptions = {},
): Plan {
  const legacy = legacyPools(pools);
  const knownIds = new Set(pools.map((pool) => pool.id));
  const groups = new Map<string, { addresses: string[]; spec: FilterSpec; pools: LegacyPool[] }>();
  for (const pool of legacy) {
    for (const spec of pool.specs) {
      const key = groupKey(pool.addresses, spec);
      const group = groups.get(key) ?? { addresses: pool.addresses, spec, pools: [] };
      group.pools.push(pool);
      groups.set(key, group);
    }
  }
  const policies = [...groups.entries()]
    .map(([key, group]) => planGroup(key, group, marked.byKey.get(key), knownIds, options))
    .sort(
      (a, b) => a.addresses.join().localeCompare(b.addresses.join()) || specKey(a.spec).localeCompare(specKey(b.spec)),
    );
  return {
    poolCount: pools.length,
    legacy,
    policies,
    duplicates: [...marked.duplicates],
    marked: marked.byKey.size + marked.duplicates.length,
  };
}

/** The policy a group without one gets: its addresses (and the webhook), filtered to its pools. */
function newPolicy(
  key: string,
  group: { addresses: string[]; spec: FilterSpec },
  poolIds: string[],
  options: PlanOptions,
): PolicyBody {
  return {
    name: policyName(group.addresses, group.spec, key),
    description: policyDescription(key),
    alert_type: ALERT_TYPE,
    enabled: true,
    mechanisms: {
      email: group.addresses.map((id) => ({ id })),
      ...(options.webhookId === undefined ? {} : { webhooks: [{ id: options.webhookId }] }),
    },
    filters: { pool_id: poolIds, new_health: [...group.spec.new_health], event_source: [...group.spec.event_source] },
  };
}

function planGroup(
  key: string,
  group: { addresses: string[]; spec: FilterSpec; pools: LegacyPool[] },
  existing: ApiPolicy | undefined,
  knownIds: ReadonlySet<string>,
  options: PlanOptions,
): PlannedPolicy {
  const poolIds = group.pools.map((pool) => pool.id).sort();
  const pools = group.pools.map((pool) => ({ id: pool.id, name: pool.name }));
  const base = { key, addresses: group.addresses, spec: group.spec, pools };
  if (existing === undefined)
    return { ...base, action: 'create', reasons: [], body: newPolicy(key, group, poolIds, options) };

  const reasons: string[] = [];
  const emails = policyEmails(existing);
  const missingEmails = group.addresses.filter((address) => !emails.includes(address));
  if (missingEmails.length > 0) reasons.push(`add recipients ${missingEmails.join(', ')}`);
  const webhooks = policyWebhooks(existing);
  if (options.webhookId !== undefined && !webhooks.includes(options.webhookId)) reasons.push('add the webhook');
  if (existing.enabled === false) reasons.push('enable it');
  if (existing.alert_type !== ALERT_TYPE) reasons.push(`set alert_type ${ALERT_TYPE}`);
  const widen = (name: string, needed: readonly string[]): string[] | undefined => {
    const current = policyFilter(existing, name);
    if (current === undefined) return undefined; // absent = matches everything
    const missing = needed.filter((value) => !current.includes(value));
    if (missing.length > 0) reasons.push(`add ${name} ${missing.join(', ')}`);
    return [...new Set([...current, ...needed])].sort();
  };
  const newHealth = widen('new_health', group.spec.new_health);
  const eventSource = widen('event_source', group.spec.event_source);
  const currentPools = policyFilter(existing, 'pool_id');
  let poolFilter: string[] | undefined;
  if (currentPools !== undefined) {
    const missing = poolIds.filter((id) => !currentPools.includes(id));
    if (missing.length > 0) reasons.push(`add ${missing.length} pool${missing.length === 1 ? '' : 's'}`);
    // Ids of deleted pools are dropped (a server may reject unknown ids); cleared pools stay covered.
    poolFilter = [...new Set([...currentPools.filter((id) => knownIds.has(id)), ...poolIds])].sort();
  }

  const otherFilters = Object.fromEntries(
    Object.entries(existing.filters ?? {}).filter(
      (entry): entry is [string, string[]] =>
        !['pool_id', 'new_health', 'event_source'].includes(entry[0]) && Array.isArray(entry[1]),
    ),
  );
  const allWebhooks = [...new Set([...webhooks, ...(options.webhookId === undefined ? [] : [options.webhookId])])];
  const body: PolicyBody = {
    name:
      typeof existing.name === 'string' && existing.name !== ''
        ? existing.name
        : policyName(group.addresses, group.spec, key),
    description:
      typeof existing.description === 'string' && existing.description.includes(key)
        ? existing.description
        : policyDescription(key),
    alert_type: ALERT_TYPE,
    enabled: true,
    mechanisms: {
      email: [...new Set([...emails, ...group.addresses])].map((id) => ({ id })),
      ...(allWebhooks.length === 0 ? {} : { webhooks: allWebhooks.map((id) => ({ id })) }),
    },
    filters: {
      ...otherFilters,
      ...(poolFilter === undefined ? {} : { pool_id: poolFilter }),
      ...(newHealth === undefined ? {} : { new_health: newHealth }),
      ...(eventSource === undefined ? {} : { event_source: eventSource }),
    },
  };
  return { ...base, action: reasons.length > 0 ? 'update' : 'keep', reasons, existing, body };
}
