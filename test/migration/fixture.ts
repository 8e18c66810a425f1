/**
 * The pools both migration suites start from: 64 pools whose names interleave five address groups and
 * an untouched group across pages, with the notification_filters that matter, and the policies a correct
 * migration must end up with.
 */
import type { StubPool } from './stub-api.js';

type Filter = StubPool['notification_filter'];

interface Group {
  email: (i: number) => string;
  filter: Filter;
  /** The (event_source, new_health) pairs policies must deliver for these pools; [] = none needed. */
  expect: Array<{ event_source: string[]; new_health: string[]; addresses: string[] }>;
}

const GROUPS: Group[] = [
  // default filter: both sources, both directions; addresses written differently but the same set
  {
    email: (i) => (i % 2 === 0 ? 'ops@example.com' : ' OPS@example.com'),
    filter: null,
    expect: [
      { addresses: ['ops@example.com'], event_source: ['origin', 'pool'], new_health: ['Healthy', 'Unhealthy'] },
    ],
  },
  // two addresses, pool events only, only when going down
  {
    email: (i) => (i % 2 === 0 ? 'a@example.com,b@example.com' : 'b@example.com, a@example.com'),
    filter: { origin: { disable: true }, pool: { healthy: false } },
    expect: [{ addresses: ['a@example.com', 'b@example.com'], event_source: ['pool'], new_health: ['Unhealthy'] }],
  },
  // same address as group 0 but sources want different directions → splits into two policies
  {
    email: () => 'ops@example.com',
    filter: { origin: { healthy: false }, pool: { healthy: null } },
    expect: [
      { addresses: ['ops@example.com'], event_source: ['origin'], new_health: ['Unhealthy'] },
      { addresses: ['ops@example.com'], event_source: ['pool'], new_health: ['Healthy', 'Unhealthy'] },
    ],
  },
  // recoveries only
  {
    email: () => 'oncall@example.net',
    filter: { origin: { healthy: true }, pool: { healthy: true } },
    expect: [{ addresses: ['oncall@example.net'], event_source: ['origin', 'pool'], new_health: ['Healthy'] }],
  },
  // every alert disabled: the email gets nothing today, so no policy is needed
  {
    email: () => 'quiet@example.com',
    filter: { origin: { disable: true }, pool: { disable: true } },
    expect: [],
  },
  // already migrated
  { email: () => '', filter: null, expect: [] },
];

const LAYOUT = [0, 1, 0, 2, 3, 4, 5, 0]; // group of pool i is LAYOUT[i % 8]

export interface FixturePool {
  name: string;
  notification_email: string;
  notification_filter: Filter;
  group: number;
}

export const POOL_COUNT = 64;

export function fixturePools(count = POOL_COUNT): FixturePool[] {
  return Array.from({ length: count }, (_, i) => {
    const group = LAYOUT[i % LAYOUT.length] ?? 0;
    const spec = GROUPS[group]!;
    return {
      name: `pool-${String(i).padStart(3, '0')}`,
      notification_email: spec.email(i),
      notification_filter: spec.filter,
      group,
    };
  });
}

/** Expected policies as `addresses|sources|healths` → sorted pool names. */
export function expectedPolicies(pools: readonly FixturePool[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pool of pools) {
    for (const e of GROUPS[pool.group]?.expect ?? []) {
      const key = `${e.addresses.join(',')}|${e.event_source.join(',')}|${e.new_health.join(',')}`;
      out.set(key, [...(out.get(key) ?? []), pool.name].sort());
    }
  }
  return out;
}

/** The same key for a policy as the API returns it. */
export function policyKey(policy: {
  mechanisms?: { email?: Array<{ id: string }> };
  filters?: Record<string, string[]>;
}): string {
  const emails = (policy.mechanisms?.email ?? []).map((m) => m.id).sort();
  const sorted = (list: string[] | undefined): string => [...(list ?? [])].sort().join(',');
  return `${emails.join(',')}|${sorted(policy.filters?.event_source)}|${sorted(policy.filters?.new_health)}`;
}
