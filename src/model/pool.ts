/**
 * The pool and origin model as the data plane sees it (Cloudflare field names). The store maps rows to
 * these; the API serialises them; routing and health read them. Live `healthy` flags are not part of
 * the model: they come from the HealthView (health-view.ts) at read time.
 */
import type { NotificationFilter } from './pool-schema.js';

export type SteeringPolicy = 'random' | 'hash' | 'least_outstanding_requests' | 'least_connections' | 'dynamic_latency';

export interface Origin {
  name: string;
  /** Node URL (http(s)://host:port/path) or bare host[:port]; may embed an API key: never log it raw. */
  address: string;
  enabled: boolean;
  /** 0..1; 0 = never chosen. */
  weight: number;
  header: Record<string, string[]>;
  /**
   * True: an archive node, which serves every block from 0 (SPEC §9: the chain tracker takes its earliest
   * block as 0 instead of learning it from missing-data answers). Absent means false; every writer (config,
   * API, stored rows) fills it in, so only hand-built origins lack it.
   */
  archive?: boolean;
  /**
   * The origin's WebSocket endpoint (ws(s)://…, canonical form of origin-address.ts; may embed an API key:
   * never log it raw). When present the chain tracker takes this origin's head from its `newHeads` push
   * instead of polling while the push is live (SPEC §9, chain/head-pushes.ts). Absent: no push.
   */
  ws_address?: string;
  /**
   * The most requests per second the gateway sends this origin (a paid provider's plan; SPEC §17): at
   * its cap the origin is skipped, not waited on (routing/throttling.ts). Absent: no cap.
   */
  max_requests_per_second?: number;
  disabled_at?: string;
}

export interface Pool {
  id: string;
  account_id: string;
  name: string;
  description: string;
  enabled: boolean;
  disabled_at?: string;
  minimum_origins: number;
  /** Monitor id, or null when the pool has none (then its enabled origins count as healthy). */
  monitor: string | null;
  notification_email: string;
  notification_filter: NotificationFilter | null;
  origins: Origin[];
  origin_steering: { policy: SteeringPolicy };
  check_regions: string[] | null;
  latitude?: number;
  longitude?: number;
  load_shedding?: Record<string, unknown>;
  created_on: string;
  modified_on: string;
}

/** Every Pool field a client controls (what a PUT sends); the store adds id, account and timestamps. */
export type PoolFields = Omit<Pool, 'id' | 'account_id' | 'created_on' | 'modified_on'>;

/**
 * Where the data plane finds pools. Lookups are synchronous and cheap (an in-memory snapshot) because
 * they sit on the request hot path; implementations refresh the snapshot when the store changes.
 */
export interface PoolDirectory {
  /** The pool of the routing account with this name, if it exists now. */
  poolByName(name: string): Pool | undefined;
  /** Every pool currently known (all accounts), for monitors. */
  allPools(): readonly Pool[];
  /** The pool (of any account) with this id, if it exists now. */
  poolById(id: string): Pool | undefined;
  /** Subscribe to snapshot changes; returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** The networks' pool lists as the config names them (`networks.{name}.pools`). */
export type NetworkPools = Readonly<Record<string, { readonly pools: readonly string[] }>>;

/**
 * Calls `visit` for each origin of each pool a network names, network by network in config order (pools
 * by name in the routing account's directory; a name with no pool now is skipped): the label sets of
 * the per-origin gauges read at scrape time.
 */
export function eachNetworkOrigin(
  networks: NetworkPools,
  directory: PoolDirectory,
  visit: (network: string, pool: Pool, origin: Origin) => void,
): void {
  for (const [network, { pools }] of Object.entries(networks)) {
    for (const name of pools) {
      const pool = directory.poolByName(name);
      if (pool === undefined) continue;
      for (const origin of pool.origins) visit(network, pool, origin);
    }
  }
}
