/**
 * Pools in the store, mapped to the shared `Pool` model (balancing/model.ts).
 *
 * Columns: name (unique per account), notification_email (so migration status is one query), monitor_id
 * (foreign key to monitors), enabled, version; everything else is JSON `settings` (PoolSettings).
 * Every write bumps `version`, which the store-backed PoolDirectory polls to notice changes made by
 * other processes.
 *
 * Order: ascending name, ties by id, for list and bulk PATCH alike, so their pages line up. Names are
 * compared bytewise on both backends (PostgreSQL uses COLLATE "C"; SQLite's default is bytewise), so a
 * page is the same set of pools whichever database holds them.
 *
 * `disabled_at` (pool and origin) is kept here: set when `enabled` turns false, kept while it stays
 * false, dropped when it turns true again.
 */
import { type Kysely, sql } from 'kysely';
import type { Pool } from '../balancing/model.js';
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { Dialect } from './database.js';
import { isUniqueViolation, newId, timestamp } from './ids.js';
import type { PageWindow } from './monitors.js';
import type { Database } from './schema.js';
import type { PoolSettings, PoolsTable } from './tables/core.js';
import { inTransaction } from './transaction.js';

/** Every Pool field a client controls. */
export type PoolFields = Omit<Pool, 'id' | 'account_id' | 'created_on' | 'modified_on'>;

type PoolRow = Omit<PoolsTable, 'version'> & { version: number };

export function rowToPool(row: PoolRow): Pool {
  const settings = JSON.parse(row.settings) as PoolSettings;
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
  if (settings.disabled_at !== undefined) pool.disabled_at = settings.disabled_at;
  if (settings.latitude !== undefined) pool.latitude = settings.latitude;
  if (settings.longitude !== undefined) pool.longitude = settings.longitude;
  if (settings.load_shedding !== undefined) pool.load_shedding = settings.load_shedding;
  return pool;
}

function fieldsToColumns(fields: PoolFields) {
  const settings: PoolSettings = {
    description: fields.description,
    minimum_origins: fields.minimum_origins,
    notification_filter: fields.notification_filter,
    origins: fields.origins,
    origin_steering: fields.origin_steering,
    check_regions: fields.check_regions,
  };
  if (fields.disabled_at !== undefined) settings.disabled_at = fields.disabled_at;
  if (fields.latitude !== undefined) settings.latitude = fields.latitude;
  if (fields.longitude !== undefined) settings.longitude = fields.longitude;
  if (fields.load_shedding !== undefined) settings.load_shedding = fields.load_shedding;
  return {
    name: fields.name,
    notification_email: fields.notification_email,
    monitor_id: fields.monitor,
    enabled: fields.enabled ? 1 : 0,
    settings: JSON.stringify(settings),
  };
}

/** `name` in bytewise order on both backends (see header). */
function byName(dialect: Dialect) {
  return dialect === 'postgres' ? sql`name collate "C"` : sql`name`;
}

export async function getPool(db: Kysely<Database>, accountId: string, id: string): Promise<Pool | undefined> {
  const row = await db
    .selectFrom('pools')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : rowToPool(row);
}

export async function findPoolByName(db: Kysely<Database>, accountId: string, name: string): Promise<Pool | undefined> {
  const row = await db
    .selectFrom('pools')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row === undefined ? undefined : rowToPool(row);
}

/** Every pool of every account with its version, for the routing snapshot and the health engine. */
export async function listAllPools(db: Kysely<Database>): Promise<{ pool: Pool; version: number }[]> {
  const rows = await db.selectFrom('pools').selectAll().orderBy('account_id').orderBy('id').execute();
  return rows.map((row) => ({ pool: rowToPool(row), version: Number(row.version) }));
}

/** id → version of every pool: a cheap fingerprint that changes on every insert, update and delete. */
export async function poolVersions(db: Kysely<Database>): Promise<Map<string, number>> {
  const rows = await db.selectFrom('pools').select(['id', 'version']).execute();
  return new Map(rows.map((row) => [row.id, Number(row.version)]));
}

export interface PoolListFilter {
  /** Only pools using this monitor id. */
  monitor?: string | undefined;
}

export async function listPools(
  db: Kysely<Database>,
  dialect: Dialect,
  accountId: string,
  window: PageWindow,
  filter: PoolListFilter = {},
): Promise<{ pools: Pool[]; total: number }> {
  let base = db.selectFrom('pools').where('account_id', '=', accountId);
  if (filter.monitor !== undefined) base = base.where('monitor_id', '=', filter.monitor);
  const rows = await base
    .selectAll()
    .orderBy(byName(dialect))
    .orderBy('id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return { pools: rows.map(rowToPool), total: Number(count.n) };
}

export async function createPool(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  fields: PoolFields,
): Promise<Pool> {
  return inTransaction(db, async (trx) => {
    await checkReferences(trx, accountId, fields, undefined);
    const now = timestamp(clock);
    const stamped = stampDisabled(undefined, fields, now);
    const row = { id: newId(), account_id: accountId, created_on: now, modified_on: now, version: 1 };
    try {
      await trx
        .insertInto('pools')
        .values({ ...row, ...fieldsToColumns(stamped) })
        .execute();
    } catch (err) {
      throw isUniqueViolation(err) ? duplicateName(fields.name) : err;
    }
    return { ...stamped, ...row };
  });
}

/**
 * Changes one pool in a transaction: `change` gets the current pool and returns the new fields (PUT
 * replaces, PATCH merges). Undefined when the pool does not exist in this account.
 */
export async function updatePool(
  db: Kysely<Database>,
  dialect: Dialect,
  clock: Clock,
  accountId: string,
  id: string,
  change: (current: Pool) => PoolFields,
): Promise<Pool | undefined> {
  return inTransaction(db, async (trx) => {
    const row = await trx
      .selectFrom('pools')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .$if(dialect === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const current = rowToPool(row);
    const next = change(current);
    await checkReferences(trx, accountId, next, id);
    const now = timestamp(clock);
    const stamped = stampDisabled(current, next, now);
    try {
      await trx
        .updateTable('pools')
        .set({ ...fieldsToColumns(stamped), modified_on: now, version: sql`version + 1` })
        .where('id', '=', id)
        .execute();
    } catch (err) {
      throw isUniqueViolation(err) ? duplicateName(next.name) : err;
    }
    return { ...stamped, id, account_id: accountId, created_on: current.created_on, modified_on: now };
  });
}

/** Deletes one pool; `guard` may refuse (throw) after seeing it. False when it does not exist. */
export async function deletePool(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  guard: (pool: Pool) => void = () => {},
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const pool = await getPool(trx, accountId, id);
    if (pool === undefined) return false;
    guard(pool);
    await trx.deleteFrom('pools').where('account_id', '=', accountId).where('id', '=', id).execute();
    return true;
  });
}

/**
 * The bulk PATCH (seed §4.3): sets `notification_email` to "" on exactly the pools of one page
 * (same order as the list), atomically, and returns that page as it is afterwards. Pools whose
 * address was already empty are returned unchanged (no new version, same modified_on).
 */
export async function clearNotificationEmailPage(
  db: Kysely<Database>,
  dialect: Dialect,
  clock: Clock,
  accountId: string,
  window: PageWindow,
): Promise<{ pools: Pool[]; total: number }> {
  return inTransaction(db, async (trx) => {
    const page = await listPools(trx, dialect, accountId, window);
    const ids = page.pools.filter((pool) => pool.notification_email !== '').map((pool) => pool.id);
    if (ids.length === 0) return page;
    await trx
      .updateTable('pools')
      .set({ notification_email: '', modified_on: timestamp(clock), version: sql`version + 1` })
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    const after = await trx.selectFrom('pools').selectAll().where('id', 'in', ids).execute();
    const changed = new Map(after.map((row) => [row.id, rowToPool(row)]));
    return { pools: page.pools.map((pool) => changed.get(pool.id) ?? pool), total: page.total };
  });
}

async function checkReferences(
  db: Kysely<Database>,
  accountId: string,
  fields: PoolFields,
  selfId: string | undefined,
): Promise<void> {
  if (fields.monitor !== null) {
    const monitor = await db
      .selectFrom('monitors')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', fields.monitor)
      .executeTakeFirst();
    if (monitor === undefined) {
      throw new SwitchyardError('API_VALIDATION', `monitor: no monitor with id "${fields.monitor}" in this account`, {
        details: { pointer: '/monitor' },
      });
    }
  }
  let clash = db.selectFrom('pools').select('id').where('account_id', '=', accountId).where('name', '=', fields.name);
  if (selfId !== undefined) clash = clash.where('id', '<>', selfId);
  if ((await clash.executeTakeFirst()) !== undefined) throw duplicateName(fields.name);
}

function duplicateName(name: string): SwitchyardError {
  return new SwitchyardError('API_NOT_UNIQUE', `name: a pool named "${name}" already exists in this account`, {
    details: { pointer: '/name' },
  });
}

/** Applies the disabled_at rule (see header) to the pool and each origin (matched by name). */
function stampDisabled(current: Pool | undefined, next: PoolFields, now: string): PoolFields {
  const since = (wasEnabled: boolean | undefined, was: string | undefined, enabled: boolean) =>
    enabled ? undefined : wasEnabled === false ? (was ?? now) : now;
  const previousOrigins = new Map((current?.origins ?? []).map((origin) => [origin.name, origin]));
  const origins = next.origins.map((origin) => {
    const { disabled_at: _ignored, ...rest } = origin;
    const before = previousOrigins.get(origin.name);
    const at = since(before?.enabled, before?.disabled_at, origin.enabled);
    return at === undefined ? rest : { ...rest, disabled_at: at };
  });
  const { disabled_at: _ignored, ...rest } = next;
  const at = since(current?.enabled, current?.disabled_at, next.enabled);
  return at === undefined ? { ...rest, origins } : { ...rest, origins, disabled_at: at };
}
