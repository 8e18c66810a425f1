/** Wire shapes the console reads (docs/api.md). */
export interface AccountItem {
  id: string;
  name: string;
}

export interface OriginRow {
  pool_id: string;
  pool_name: string;
  networks: string[];
  origin_name: string;
  enabled: boolean;
  healthy: boolean;
  failure_reason: string;
  head: number | null;
  lag: number | null;
  earliest_block: number | null;
  syncing: boolean;
  requests: number;
  errors: number;
  requests_per_second: number;
  error_rate: number;
  p50_ms: number | null;
  series?: Array<{ minute: string; requests: number; errors: number; p50_ms: number | null }>;
}

export interface HealthEvent {
  id: string;
  event_source: 'origin' | 'pool';
  pool_name: string;
  origin_name: string | null;
  previous: string;
  new_health: 'Healthy' | 'Unhealthy';
  reason: string;
  occurred_at: string;
}

export interface Delivery {
  id: string;
  state: 'pending' | 'failing' | 'dead' | 'sent' | 'cancelled';
  name: string;
  alert_type: string;
  mechanism_type: 'email' | 'webhook';
  mechanism: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export interface HistoryItem {
  id: string;
  name: string;
  alert_type: string;
  mechanism: string;
  mechanism_type: string;
  sent: string;
}

export interface PolicyItem {
  id: string;
  name: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: { email?: Array<{ id: string }>; webhooks?: Array<{ id: string }> };
  filters: Record<string, string[]>;
}

export interface Destination {
  id: string;
  name: string;
  type: string;
  last_success: string | null;
  last_failure: string | null;
}

export interface MigrationStatus {
  complete: boolean;
  pools_with_legacy_email: number;
  addresses: string[];
}

export interface PoolItem {
  id: string;
  name: string;
  notification_email: string;
  origins: Array<{ name: string; enabled: boolean }>;
}

/** `GET …/gateway/networks`: a configured network, its lifecycle and its pools in failover order. */
export interface NetworkItem {
  name: string;
  chain_id: number;
  status: 'supported' | 'retired';
  retired_on: string | null;
  replacement: string | null;
  pools: Array<{ name: string; id: string | null; enabled: boolean | null; healthy: boolean | null }>;
}

export type IncidentKindName = 'head_stall' | 'origin_divergence' | 'reorg' | 'finality_stall' | 'origin_integrity';

/** `GET …/gateway/incidents`: a chain incident as the account's alerts show it. */
export interface IncidentItem {
  id: string;
  network: string;
  kind: IncidentKindName;
  status: 'open' | 'closed';
  opened_at: string;
  closed_at: string | null;
  summary: string;
  data: { block_number?: number; depth?: number; origins?: string[]; since?: string };
  end_data: { block_number?: number } | null;
  pools: Array<{ id: string; name: string | null }>;
}

export interface GatewayKeyItem {
  id: string;
  name: string;
  enabled: boolean;
  networks: string[] | null;
  rate_limit: { requests_per_second: number; burst: number } | null;
  daily_quota: number | null;
  created_on: string;
  last_used_on: string | null;
}

/** One row of `GET …/gateway/keys/{id}/usage`: one day and network that had calls. */
export interface KeyUsageRow {
  date: string;
  network: string;
  requests: number;
  errors: number;
}

export interface TransactionItem {
  hash: string;
  network: string;
  from: string;
  nonce: number;
  key_id: string | null;
  status: 'pending' | 'included' | 'final' | 'replaced' | 'dropped';
  block_number: number | null;
  block_hash: string | null;
  transaction_index: number | null;
  replaced_by: string | null;
  first_seen: string;
  updated_at: string;
  history: Array<{ status: string; at: string; block_number?: number; block_hash?: string }>;
}
