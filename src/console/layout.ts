/**
 * How the origins view lays out networks → pools → origins (pure; docs/console.md "Origins"):
 * - one section per configured network (`GET …/gateway/networks`): supported networks in the config's
 *   order, then retired ones (each shown with its successor), then one section of the pools no network
 *   uses — always last;
 * - inside a network, its pools in failover order (the network's `pools`), each with its role: the first
 *   enabled, healthy pool is `serving` (the gateway sends the network's calls there), later healthy ones
 *   `standby`, then `unhealthy`, `disabled`, or `missing` for a name no pool has yet; in a retired network
 *   and among unused pools nothing serves, so a pool is `healthy` or `unhealthy`;
 * - past COLLAPSE_AFTER (10) pools the view offers a filter and per-network collapse: the filter keeps
 *   pools whose name, an origin's name or the network's name contains it (any case).
 */
import type { NetworkItem, OriginRow } from './types.js';

export const COLLAPSE_AFTER = 10;

export type PoolRole = 'serving' | 'standby' | 'unhealthy' | 'disabled' | 'missing' | 'healthy';

export interface PoolGroup {
  /** The pool's id, or `missing:<name>` for a configured name no pool has. */
  key: string;
  id: string | null;
  name: string;
  /** 1-based place in the network's failover order; null among unused pools. */
  position: number | null;
  role: PoolRole;
  origins: OriginRow[];
}

export interface NetworkSection {
  /** `network:<name>`, or `unused` for the pools no network uses. */
  key: string;
  /** null for the section of unused pools. */
  network: NetworkItem | null;
  pools: PoolGroup[];
}

function originsByPool(stats: readonly OriginRow[]): Map<string, OriginRow[]> {
  const byPool = new Map<string, OriginRow[]>();
  for (const row of stats) {
    const list = byPool.get(row.pool_id);
    if (list === undefined) byPool.set(row.pool_id, [row]);
    else list.push(row);
  }
  return byPool;
}

function networkPools(network: NetworkItem, byPool: ReadonlyMap<string, OriginRow[]>): PoolGroup[] {
  let served = network.status === 'retired';
  return network.pools.map((pool, i): PoolGroup => {
    const base = { name: pool.name, position: i + 1 };
    if (pool.id === null) return { ...base, key: `missing:${pool.name}`, id: null, role: 'missing', origins: [] };
    let role: PoolRole;
    if (pool.enabled === false) role = 'disabled';
    else if (pool.healthy !== true) role = 'unhealthy';
    else if (network.status === 'retired') role = 'healthy';
    else role = served ? 'standby' : 'serving';
    if (role === 'serving') served = true;
    return { ...base, key: pool.id, id: pool.id, role, origins: byPool.get(pool.id) ?? [] };
  });
}

/** The sections in display order (see the header). */
export function layoutSections(networks: readonly NetworkItem[], stats: readonly OriginRow[]): NetworkSection[] {
  const byPool = originsByPool(stats);
  const ordered = [
    ...networks.filter((n) => n.status !== 'retired'),
    ...networks.filter((n) => n.status === 'retired'),
  ];
  const sections: NetworkSection[] = ordered.map((network) => ({
    key: `network:${network.name}`,
    network,
    pools: networkPools(network, byPool),
  }));
  const used = new Set(networks.flatMap((n) => n.pools.map((p) => p.id)));
  const unused = [...byPool].filter(([id]) => !used.has(id));
  if (unused.length > 0) {
    sections.push({
      key: 'unused',
      network: null,
      pools: unused.map(([id, origins]) => ({
        key: id,
        id,
        name: origins[0]?.pool_name ?? id,
        position: null,
        role: origins.some((o) => o.healthy) ? 'healthy' : 'unhealthy',
        origins,
      })),
    });
  }
  return sections;
}

/** How many pools the sections show (each once, though a pool may serve several networks). */
export function poolCount(sections: readonly NetworkSection[]): number {
  return new Set(sections.flatMap((s) => s.pools.flatMap((pool) => (pool.id === null ? [] : [pool.id])))).size;
}

/** The sections with only the pools matching `query`; sections left without pools go (see the header). */
export function filterSections(sections: readonly NetworkSection[], query: string): NetworkSection[] {
  const q = query.trim().toLowerCase();
  if (q === '') return [...sections];
  const out: NetworkSection[] = [];
  for (const section of sections) {
    if (section.network?.name.toLowerCase().includes(q)) {
      out.push(section);
      continue;
    }
    const pools = section.pools.filter(
      (pool) =>
        pool.name.toLowerCase().includes(q) || pool.origins.some((o) => o.origin_name.toLowerCase().includes(q)),
    );
    if (pools.length > 0) out.push({ ...section, pools });
  }
  return out;
}

/** One line for a collapsed section: how many pools, which serves, how many origins are down. */
export function sectionSummary(section: NetworkSection): string {
  const pools = section.pools.filter((pool) => pool.id !== null);
  const missing = section.pools.length - pools.length;
  const serving = section.pools.find((pool) => pool.role === 'serving');
  // Origins of a disabled pool are not in service: they count as neither up nor down.
  const down = pools
    .filter((pool) => pool.role !== 'disabled')
    .reduce((n, pool) => n + pool.origins.filter((o) => o.enabled && !o.healthy).length, 0);
  const parts = [`${pools.length} pool${pools.length === 1 ? '' : 's'}`];
  if (missing > 0) parts.push(`${missing} not created yet`);
  if (section.network !== null && section.network.status !== 'retired') {
    parts.push(serving === undefined ? 'no pool serving' : `serving from ${serving.name}`);
  }
  parts.push(down === 0 ? 'every enabled origin healthy' : `${down} origin${down === 1 ? '' : 's'} unhealthy`);
  return parts.join(' · ');
}
