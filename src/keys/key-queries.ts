/**
 * Store queries of gateway keys (table `gateway_keys`, migration 006): the API's CRUD and roll, and
 * what the gateway's key directory reads (the usable keys, and the cheap `(id, version)` fingerprint).
 * Every API write bumps `version`; `last_used_on` is written by the usage flush and bumps nothing.
 * The value is never stored: create and roll return it once, the row keeps its SHA-256.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { type GatewayKeyRecord, type KeyRateLimit, keyDigest } from '../model/gateway-keys.js';
import { BURST, type LimitRange, REQUESTS_PER_SECOND } from '../model/limit-bounds.js';
import { newId, timestamp } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import type { GatewayKeysTable } from '../store/tables/keys.js';
import { generateKeyValue } from './key-secrets.js';

/** A key as the API shows it (never its value or hash). */
export interface GatewayKeyInfo {
  id: string;
  name: string;
  enabled: boolean;
  networks: string[] | null;
  rate_limit: KeyRateLimit | null;
  daily_quota: number | null;
  created_on: string;
  modified_on: string;
  last_used_on: string | null;
}

/** The fields a create sets and an update may change. */
export interface GatewayKeyFields {
  name: string;
  enabled: boolean;
  networks: string[] | null;
  rate_limit: KeyRateLimit | null;
  daily_quota: number | null;
}

export interface CreatedGatewayKey extends GatewayKeyInfo {
  /** The secret; returned once and never stored. */
  value: string;
}

const COLUMNS = [
  'id',
  'name',
  'enabled',
  'networks',
  'rate_limit',
  'daily_quota',
  'created_on',
  'modified_on',
  'last_used_on',
] as const;

type KeyRow = Pick<GatewayKeysTable, (typeof COLUMNS)[number]>;

export async function createGatewayKey(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  fields: GatewayKeyFields,
): Promise<CreatedGatewayKey> {
  const value = generateKeyValue();
  const now = timestamp(clock);
  const row = {
    id: newId(),
    account_id: accountId,
    key_hash: keyDigest(value),
    ...encode(fields),
    created_on: now,
    modified_on: now,
    last_used_on: null,
  };
  await db.insertInto('gateway_keys').values(row).execute();
  return { ...toInfo(row), value };
}

export async function getGatewayKey(
  db: Kysely<Database>,
  accountId: string,
  id: string,
): Promise<GatewayKeyInfo | undefined> {
  const row = await db
    .selectFrom('gateway_keys')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toInfo(row);
}

export async function countGatewayKeys(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('gateway_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Oldest first; ties broken by id so pages never overlap. */
export async function listGatewayKeys(
  db: Kysely<Database>,
  accountId: string,
  limit: number,
  offset: number,
): Promise<GatewayKeyInfo[]> {
  const rows = await db
    .selectFrom('gateway_keys')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('created_on', 'asc')
    .orderBy('id', 'asc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toInfo);
}

/** Replaces the changeable fields in one statement; false when no such key. */
export async function updateGatewayKey(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  id: string,
  fields: GatewayKeyFields,
): Promise<boolean> {
  const result = await db
    .updateTable('gateway_keys')
    .set((eb) => ({ ...encode(fields), modified_on: timestamp(clock), version: eb('version', '+', 1) }))
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives the key a new value; the old one is refused once the gateways see the new version. */
export async function rollGatewayKey(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  id: string,
): Promise<string | undefined> {
  const value = generateKeyValue();
  const result = await db
    .updateTable('gateway_keys')
    .set((eb) => ({ key_hash: keyDigest(value), modified_on: timestamp(clock), version: eb('version', '+', 1) }))
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0 ? value : undefined;
}

export async function deleteGatewayKey(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('gateway_keys')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** `id → version` of every key of the account: changes with every API write, create and delete. */
export async function gatewayKeyVersions(db: Kysely<Database>, accountId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('gateway_keys')
    .select(['id', 'version'])
    .where('account_id', '=', accountId)
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.version)]));
}

/** The account's keys as the gateway enforces them (enabled ones only) and the versions they were read at. */
export async function enforcedGatewayKeys(
  db: Kysely<Database>,
  accountId: string,
): Promise<{ keys: GatewayKeyRecord[]; versions: Map<string, number> }> {
  const rows = await db
    .selectFrom('gateway_keys')
    .select(['id', 'key_hash', 'enabled', 'networks', 'rate_limit', 'daily_quota', 'version'])
    .where('account_id', '=', accountId)
    .execute();
  const keys: GatewayKeyRecord[] = [];
  for (const row of rows) {
    if (Number(row.enabled) !== 1) continue;
    keys.push({
      id: row.id,
      digest: row.key_hash,
      networks: decodeNetworks(row.networks),
      rate_limit: decodeRateLimit(row.rate_limit),
      daily_quota: row.daily_quota === null ? null : Number(row.daily_quota),
    });
  }
  return { keys, versions: new Map(rows.map((row) => [row.id, Number(row.version)])) };
}

/** Sets `last_used_on` of these keys (the usage flush), leaving `version` alone. */
export async function touchGatewayKeys(db: Kysely<Database>, ids: readonly string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('gateway_keys').set({ last_used_on: at }).where('id', 'in', ids).execute();
}

function encode(fields: GatewayKeyFields) {
  return {
    name: fields.name,
    enabled: fields.enabled ? 1 : 0,
    networks: fields.networks === null ? null : JSON.stringify(fields.networks),
    rate_limit: fields.rate_limit === null ? null : JSON.stringify(fields.rate_limit),
    daily_quota: fields.daily_quota,
  };
}

function toInfo(row: KeyRow): GatewayKeyInfo {
  return {
    id: row.id,
    name: row.name,
    enabled: Number(row.enabled) === 1,
    networks: decodeNetworks(row.networks),
    rate_limit: decodeRateLimit(row.rate_limit),
    daily_quota: row.daily_quota === null ? null : Number(row.daily_quota),
    created_on: row.created_on,
    modified_on: row.modified_on,
    last_used_on: row.last_used_on,
  };
}

/**
 * The stored network list. Fails closed: a value that is not a JSON list of strings (a hand edit) reads
 * as no network at all rather than every network.
 */
function decodeNetworks(text: string | null): string[] | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.every((name) => typeof name === 'string')) return parsed;
  } catch {
    // fall through
  }
  return [];
}

/**
 * The stored rate limit. Fails closed: an unreadable value reads as 1 call per second. A value outside
 * the sane bounds (model/limit-bounds.ts; stored before they were checked, or by hand) is brought to the
 * nearest bound, so no limit reaches the gateway that would answer `Retry-After: Infinity`.
 */
function decodeRateLimit(text: string | null): KeyRateLimit | null {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as Partial<KeyRateLimit>;
    const { requests_per_second: rate, burst } = parsed;
    if (typeof rate === 'number' && rate > 0 && typeof burst === 'number' && burst >= 1) {
      return { requests_per_second: within(REQUESTS_PER_SECOND, rate), burst: Math.floor(within(BURST, burst)) };
    }
  } catch {
    // fall through
  }
  return { requests_per_second: 1, burst: 1 };
}

function within(range: LimitRange, value: number): number {
  return Math.min(range.max, Math.max(range.min, value));
}
