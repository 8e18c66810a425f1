/**
 * Row types of the gateway key tables (migration 006). Owned by `src/keys/`. Conventions as in core.ts.
 */
import type { Generated } from 'kysely';

export interface GatewayKeysTable {
  id: string; // 32 hex, public identifier of the key
  account_id: string; // always the routing account (config account_id) when written
  name: string;
  key_hash: string; // sha256 hex of the value; the value itself is never stored
  enabled: number; // 0 | 1
  networks: string | null; // JSON string[]; null = every network
  rate_limit: string | null; // JSON {requests_per_second, burst}; null = gateway.rate_limit
  daily_quota: number | string | null; // calls per UTC day; null = none; bigint: PostgreSQL answers a string
  created_on: string;
  modified_on: string;
  last_used_on: string | null; // refreshed by the usage flush (at most once a minute per key)
  /** Increments on every API write (not on last_used_on): the gateway's cheap change fingerprint. */
  version: Generated<number>;
}

export interface GatewayKeyUsageTable {
  key_id: string;
  date: string; // YYYY-MM-DD, UTC
  network: string;
  requests: Generated<number | string>; // bigint: PostgreSQL answers a string
  errors: Generated<number | string>;
}

export interface KeyTables {
  gateway_keys: GatewayKeysTable;
  gateway_key_usage: GatewayKeyUsageTable;
}
