/**
 * Row types of the core tables (accounts, tokens, monitors, pools). Conventions for every table:
 * ids are text; timestamps are RFC 3339 text in UTC (sortable); booleans are integers 0/1 and JSON is
 * text, so one schema runs unchanged on SQLite and PostgreSQL.
 */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string; // 32 lowercase hex
  name: string;
  created_on: string;
}

export interface ApiTokensTable {
  id: string; // 32 hex, public identifier of the token
  account_id: string;
  name: string;
  token_hash: string; // sha256 hex of the secret; the secret itself is never stored
  read_only: number; // 0 | 1
  created_on: string; // shown as issued_on
  last_used_on: string | null;
  status: string; // 'active' | 'disabled'; "expired" is derived from expires_on, never stored
  expires_on: string | null; // RFC 3339 UTC; the token is refused from this instant on
  not_before: string | null; // RFC 3339 UTC; the token is refused before this instant
  modified_on: string;
  policies: string; // JSON: TokenPolicy[] (accounts/token-permissions.ts); read_only is derived from it
}

export interface MonitorsTable {
  id: string; // 32 hex
  account_id: string;
  settings: string; // JSON: every monitor field with defaults filled in (MonitorSettings)
  created_on: string;
  modified_on: string;
}

export interface PoolsTable {
  id: string; // 32 hex
  account_id: string;
  name: string; // unique per account
  notification_email: string; // "" = none; kept as a column so migration status is one query
  monitor_id: string | null;
  enabled: number; // 0 | 1
  settings: string; // JSON: PoolSettings
  created_on: string;
  modified_on: string;
  /** Increments on every write; lets caches (gateway routing) notice changes cheaply. */
  version: Generated<number>;
}

export interface CoreTables {
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  monitors: MonitorsTable;
  pools: PoolsTable;
}

/** The JSON in `pools.settings`: every Pool field that is not a column of its own. */
export interface PoolSettings {
  description: string;
  disabled_at?: string;
  minimum_origins: number;
  notification_filter: import('../../model/pool-schema.js').NotificationFilter | null;
  origins: import('../../model/pool.js').Origin[];
  origin_steering: import('../../model/pool.js').Pool['origin_steering'];
  check_regions: string[] | null;
  latitude?: number;
  longitude?: number;
  load_shedding?: Record<string, unknown>;
}
