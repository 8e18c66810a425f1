/**
 * How a pool is stored: the columns (name, notification_email, monitor_id, enabled) plus JSON `settings`
 * (PoolSettings) for every other field, and back.
 *
 * The origins' secrets are sealed in `settings` (pool-secrets.ts): writing takes the `Sealer` of the
 * write's transaction (store/store-secrets.ts), reading an `Opener`.
 *
 * Reading is defensive: `settings` is checked against the shape `fieldsToColumns` writes (members added
 * later, or missing, take their defaults). A row that still cannot be decoded — not JSON, `{}` (no
 * `origins`), a string where a list belongs, sealed secrets that do not open: what a hand edit or a bad
 * restore leaves — is reported, never thrown at a caller that reads many rows: `rowsToPools` skips it and
 * tells `onCorrupt`; `rowToPool` (one pool asked for by id or name) throws `CorruptPoolError`. Secrets
 * sealed with a key this process does not hold are not a damaged row: that throws `SECRETS_KEY_STALE`
 * (store-secrets.ts) to every caller.
 *
 * `DecodedPoolMemo` keeps the Pool decoded from each row it saw, keyed by pool id and valid while the row's
 * `version` and `modified_on` are the same. Every write of a pool bumps `version` (pool-queries.ts,
 * migrations; the routing directory relies on the same rule), so an unchanged stamp means an unchanged row,
 * and a list can read just the stamps of a page and the rest only of rows it has not decoded. A writer
 * that bypassed the store's functions without bumping `version` would go unseen here as by routing. It
 * hands back the very same Pool object for an unchanged row (treat it as read-only), so callers may key
 * their own caches on that object (WeakMap). At most `maxEntries` (default 5000) rows are kept; those
 * seen longest ago go first.
 */
import { z } from 'zod';
import type { Pool, PoolFields } from '../model/pool.js';
import { notificationFilter, STEERING_POLICIES } from '../model/pool-schema.js';
import { SealedValueError } from '../store/secret-box.js';
import type { Opener, Sealer } from '../store/store-secrets.js';
import type { PoolSettings, PoolsTable } from '../store/tables/core.js';
import { openPoolSettings, sealPoolSettings } from './pool-secrets.js';

export type PoolRow = Omit<PoolsTable, 'version'> & { version: number | string };

/** Told about each row that cannot be decoded; the row is skipped. */
export type OnCorruptPool = (corrupt: { pool_id: string; reason: string }) => void;

/** A read of one pool whose stored settings cannot be decoded. */
export class CorruptPoolError extends Error {
  constructor(
    readonly poolId: string,
    reason: string,
  ) {
    super(`pool ${poolId}: stored settings cannot be read (${reason})`);
    this.name = 'CorruptPoolError';
  }
}

/** The shape of `pools.settings` as written by `fieldsToColumns`; fields added later get defaults. */
const storedOrigin = z.object({
  name: z.string(),
  address: z.string(),
  enabled: z.boolean().default(true),
  weight: z.number().default(1),
  header: z.record(z.string(), z.array(z.string())).default({}),
  // Optional in stored rows: a row without it is not an archive node.
  archive: z.boolean().default(false),
  // Absent: the origin pushes no newHeads.
  ws_address: z.string().optional(),
  max_requests_per_second: z.number().positive().optional(),
  disabled_at: z.string().optional(),
});
const storedSettings = z.object({
  description: z.string().default(''),
  disabled_at: z.string().optional(),
  minimum_origins: z.number().default(1),
  notification_filter: notificationFilter.default(null),
  origins: z.array(storedOrigin),
  origin_steering: z.object({ policy: z.enum(STEERING_POLICIES) }).default({ policy: 'random' }),
  check_regions: z.array(z.string()).nullable().default(null),
  latitude: z.number().optional(),
  longitude: z.number().optional(),
  load_shedding: z.record(z.string(), z.unknown()).optional(),
});

function decodeSettings(row: PoolRow, opener: Opener): { settings: PoolSettings } | { reason: string } {
  let json: unknown;
  try {
    json = openPoolSettings(JSON.parse(row.settings), opener, row.id);
  } catch (err) {
    if (err instanceof SealedValueError) return { reason: err.message };
    if (err instanceof SyntaxError) return { reason: 'not JSON' };
    throw err;
  }
  const parsed = storedSettings.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { reason: `${issue?.path.join('.') || 'settings'}: ${issue?.message ?? 'invalid'}` };
  }
  return { settings: parsed.data as PoolSettings };
}

/** The row as a Pool, or why it cannot be one. */
function decodeRow(row: PoolRow, opener: Opener): { pool: Pool } | { reason: string } {
  const decoded = decodeSettings(row, opener);
  if (!('settings' in decoded)) return decoded;
  const { settings } = decoded;
  const pool: Pool = {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    description: settings.description,
    enabled: Number(row.enabled) === 1,
    minimum_origins: settings.minimum_origins,
    monitor: row.monitor_id,
    notification_email: row.notification_email,
    notification_filter: settings.notification_filter,
    origins: settings.origins,
    origin_steering: settings.origin_steering,
    check_regions: settings.check_regions,
    created_on: row.created_on,
    modified_on: row.modified_on,
  };
  copyOptional(settings, pool);
  return { pool };
}

/** One pool; throws CorruptPoolError when its row cannot be decoded. */
export function rowToPool(row: PoolRow, opener: Opener): Pool {
  const decoded = decodeRow(row, opener);
  if ('pool' in decoded) return decoded.pool;
  throw new CorruptPoolError(row.id, decoded.reason);
}

/** Many pools; undecodable rows are skipped and reported. */
export function rowsToPools(rows: readonly PoolRow[], opener: Opener, onCorrupt: OnCorruptPool | undefined): Pool[] {
  const pools: Pool[] = [];
  for (const row of rows) {
    const decoded = decodeRow(row, opener);
    if ('pool' in decoded) pools.push(decoded.pool);
    else onCorrupt?.({ pool_id: row.id, reason: decoded.reason });
  }
  return pools;
}

/** What decides whether a memo entry still holds (see header). */
export type PoolStamp = Pick<PoolRow, 'id' | 'version' | 'modified_on'>;

/** The decoded pool of each row seen before, while its columns are unchanged (see header). */
export class DecodedPoolMemo {
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { stamp: PoolStamp; pool: Pool }>();

  constructor(maxEntries = DEFAULT_MEMO_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  /** The pool decoded earlier from the row with this stamp, if any. */
  get(stamp: PoolStamp): Pool | undefined {
    const seen = this.#entries.get(stamp.id);
    if (seen === undefined || !sameStamp(seen.stamp, stamp)) return undefined;
    // Re-inserted, so the rows read most recently are the last to be dropped.
    this.#entries.delete(stamp.id);
    this.#entries.set(stamp.id, seen);
    return seen.pool;
  }

  /** Like `rowsToPools`, reusing the Pool of every row whose stamp is unchanged, and remembering the rest. */
  rowsToPools(rows: readonly PoolRow[], opener: Opener, onCorrupt: OnCorruptPool | undefined): Pool[] {
    const pools: Pool[] = [];
    for (const row of rows) {
      const known = this.get(row);
      if (known !== undefined) {
        pools.push(known);
        continue;
      }
      this.#entries.delete(row.id);
      const decoded = decodeRow(row, opener);
      if (!('pool' in decoded)) {
        onCorrupt?.({ pool_id: row.id, reason: decoded.reason });
        continue;
      }
      this.#entries.set(row.id, {
        stamp: { id: row.id, version: row.version, modified_on: row.modified_on },
        pool: decoded.pool,
      });
      pools.push(decoded.pool);
    }
    for (const id of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(id);
    }
    return pools;
  }

  get size(): number {
    return this.#entries.size;
  }
}

const DEFAULT_MEMO_ENTRIES = 5000;

function sameStamp(a: PoolStamp, b: PoolStamp): boolean {
  return String(a.version) === String(b.version) && a.modified_on === b.modified_on;
}

/** The fields stored only when present (both directions use it, so they cannot drift). */
function copyOptional(from: Partial<PoolSettings | PoolFields>, to: Partial<PoolSettings | Pool>): void {
  if (from.disabled_at !== undefined) to.disabled_at = from.disabled_at;
  if (from.latitude !== undefined) to.latitude = from.latitude;
  if (from.longitude !== undefined) to.longitude = from.longitude;
  if (from.load_shedding !== undefined) to.load_shedding = from.load_shedding;
}

/** The columns of pool `poolId` for these fields, its secrets sealed with `sealer`. */
export function fieldsToColumns(fields: PoolFields, sealer: Sealer, poolId: string) {
  const settings: PoolSettings = {
    description: fields.description,
    minimum_origins: fields.minimum_origins,
    notification_filter: fields.notification_filter,
    origins: fields.origins,
    origin_steering: fields.origin_steering,
    check_regions: fields.check_regions,
  };
  copyOptional(fields, settings);
  return {
    name: fields.name,
    notification_email: fields.notification_email,
    monitor_id: fields.monitor,
    enabled: fields.enabled ? 1 : 0,
    settings: JSON.stringify(sealPoolSettings({ ...settings }, sealer, poolId)),
  };
}
