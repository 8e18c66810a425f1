/**
 * Pools in the store, mapped to the shared `Pool` model (model/pool.ts).
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
 * Every write checks the monitor reference and the unique name and stamps `disabled_at` (pool and
 * origin) by the rules in pool-write-rules.ts.
 *
 * Origins' secrets are sealed in the row (pool-secrets.ts): reads take an `Opener` (the store's secrets,
 * store/store-secrets.ts), writes the `StoreSecrets`, whose sealer each write takes first in its
 * transaction. Rows are decoded defensively (pool-rows.ts): lists and the routing snapshot skip a row that cannot be
 * decoded and report it through `onCorrupt` (callers log it), a read of that one pool throws
 * `CorruptPoolError` (a logged 500 on the API), and it can still be deleted.
 *
 * `listPools` given a `DecodedPoolMemo` (the API's list) reads the page's id, version and modified_on, then
 * the whole rows of only those the memo does not hold: every write here bumps `version`, which is what
 * makes skipping the rest of an unchanged row safe.
 */
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Pool, PoolFields } from '../model/pool.js';
import type { Dialect } from '../store/database.js';
import { isUniqueViolation, newId, timestamp } from '../store/ids.js';
import type { PageWindow } from '../store/page-window.js';
import type { Database } from '../store/schema.js';
import type { Opener, StoreSecrets } from '../store/store-secrets.js';
import { inTransaction } from '../store/transaction.js';
import {
  type DecodedPoolMemo,
  fieldsToColumns,
  type OnCorruptPool,
  type PoolRow,
  rowsToPools,
  rowToPool,
} from './pool-rows.js';
import { checkReferences, duplicateName, stampDisabled } from './pool-write-rules.js';

export { CorruptPoolError, DecodedPoolMemo, type OnCorruptPool } from './pool-rows.js';
export type { PoolFields };

/** The client-controlled fields of a pool (what PUT would send back). */
export function poolFields(pool: Pool): PoolFields {
  const { id: _id, account_id: _account, created_on: _created, modified_on: _modified, ...fields } = pool;
  return fields;
}

/** `name` in bytewise order on both backends (see header). */
function byName(dialect: Dialect) {
  return dialect === 'postgres' ? sql`name collate "C"` : sql`name`;
}

function selectPool(db: Kysely<Database>, accountId: string) {
  return db.selectFrom('pools').selectAll().where('account_id', '=', accountId);
}

export async function getPool(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  id: string,
): Promise<Pool | undefined> {
  const row = await selectPool(db, accountId).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : rowToPool(row, secrets);
}

export async function findPoolByName(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  name: string,
): Promise<Pool | undefined> {
  const row = await selectPool(db, accountId).where('name', '=', name).executeTakeFirst();
  return row === undefined ? undefined : rowToPool(row, secrets);
}

/** The account's pools of these names (in no particular order); undecodable rows are left out and reported. */
export async function poolsNamed(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  names: readonly string[],
  onCorrupt?: OnCorruptPool,
): Promise<Pool[]> {
  if (names.length === 0) return [];
  const rows = await selectPool(db, accountId)
    .where('name', 'in', [...new Set(names)])
    .execute();
  return rowsToPools(rows, secrets, onCorrupt);
}

/**
 * Every pool of every account, for the routing snapshot and the health engine, with the version of
 * every row (undecodable rows included, so the snapshot's fingerprint matches `poolVersions`).
 */
export async function listAllPools(
  db: Kysely<Database>,
  secrets: Opener,
  onCorrupt?: OnCorruptPool,
): Promise<{ pools: Pool[]; versions: Map<string, number> }> {
  const rows = await db.selectFrom('pools').selectAll().orderBy('account_id').orderBy('id').execute();
  return {
    pools: rowsToPools(rows, secrets, onCorrupt),
    versions: new Map(rows.map((row) => [row.id, Number(row.version)])),
  };
}

/** id → version of every pool: a cheap fingerprint that changes on every insert, update and delete. */
export async function poolVersions(db: Kysely<Database>): Promise<Map<string, number>> {
  const rows = await db.selectFrom('pools').select(['id', 'version']).execute();
  return new Map(rows.map((row) => [row.id, Number(row.version)]));
}

export interface PoolListFilter {
  /** Only pools using this monitor id. */
  monitor?: string | undefined;
  /** Told about rows of the page that cannot be decoded (they are left out; `total` still counts them). */
  onCorrupt?: OnCorruptPool | undefined;
  /** Reuses the pools decoded for earlier pages while their rows are unchanged (pool-rows.ts). */
  memo?: DecodedPoolMemo | undefined;
}

export async function listPools(
  db: Kysely<Database>,
  secrets: Opener,
  dialect: Dialect,
  accountId: string,
  window: PageWindow,
  filter: PoolListFilter = {},
): Promise<{ pools: Pool[]; total: number }> {
  if (filter.memo !== undefined) return listPoolsMemo(db, secrets, dialect, accountId, window, filter, filter.memo);
  const { rows, total } = await pageRows(db, dialect, accountId, window, filter.monitor);
  return { pools: rowsToPools(rows, secrets, filter.onCorrupt), total };
}

/**
 * `listPools` with a memo: the page's stamps (id, version, modified_on) first, then the whole rows of only
 * those the memo does not hold (one query for all of them), so an unchanged page reads nothing else. A row deleted between
 * the two reads is left out, as if it had gone just before the first; a row changed between them is
 * shown as it is after the change.
 */
async function listPoolsMemo(
  db: Kysely<Database>,
  secrets: Opener,
  dialect: Dialect,
  accountId: string,
  window: PageWindow,
  filter: PoolListFilter,
  memo: DecodedPoolMemo,
): Promise<{ pools: Pool[]; total: number }> {
  const base = pageQuery(db, accountId, filter.monitor);
  const columns = await base
    .select(['id', 'version', 'modified_on'])
    .orderBy(byName(dialect))
    .orderBy('id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  const total = await countOf(base);
  const known = columns.map((row) => memo.get(row));
  const missing = columns.filter((_, i) => known[i] === undefined).map((row) => row.id);
  const fresh = new Map<string, Pool>();
  if (missing.length > 0) {
    const rows = await selectPool(db, accountId).where('id', 'in', missing).execute();
    for (const pool of memo.rowsToPools(rows, secrets, filter.onCorrupt)) fresh.set(pool.id, pool);
  }
  const pools = columns.map((row, i) => known[i] ?? fresh.get(row.id));
  return { pools: pools.filter((pool) => pool !== undefined), total };
}

function pageQuery(db: Kysely<Database>, accountId: string, monitor: string | undefined) {
  const base = db.selectFrom('pools').where('account_id', '=', accountId);
  return monitor === undefined ? base : base.where('monitor_id', '=', monitor);
}

async function countOf(base: ReturnType<typeof pageQuery>): Promise<number> {
  const count = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(count.n);
}

/** The raw rows of one page in list order, and how many rows the whole list has. */
async function pageRows(
  db: Kysely<Database>,
  dialect: Dialect,
  accountId: string,
  window: PageWindow,
  monitor?: string,
): Promise<{ rows: PoolRow[]; total: number }> {
  const base = pageQuery(db, accountId, monitor);
  const rows = await base
    .selectAll()
    .orderBy(byName(dialect))
    .orderBy('id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  return { rows, total: await countOf(base) };
}

/**
 * Runs inside a pool write's transaction, after the reference checks and before the row is written;
 * throws to refuse the write (the API's per-account limits, accounts/limits.ts).
 */
export type PoolWriteGuard = (trx: Kysely<Database>, next: PoolFields, current: Pool | undefined) => Promise<void>;

export async function createPool(
  db: Kysely<Database>,
  secrets: StoreSecrets,
  clock: Clock,
  accountId: string,
  fields: PoolFields,
  guard?: PoolWriteGuard,
): Promise<Pool> {
  return inTransaction(db, async (trx) => {
    const sealer = await secrets.sealer(trx);
    await checkReferences(trx, accountId, fields, undefined);
    await guard?.(trx, fields, undefined);
    const now = timestamp(clock);
    const stamped = stampDisabled(undefined, fields, now);
    const row = { id: newId(), account_id: accountId, created_on: now, modified_on: now, version: 1 };
    try {
      await trx
        .insertInto('pools')
        .values({ ...row, ...fieldsToColumns(stamped, sealer, row.id) })
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
  secrets: StoreSecrets,
  dialect: Dialect,
  clock: Clock,
  accountId: string,
  id: string,
  change: (current: Pool) => PoolFields,
  guard?: PoolWriteGuard,
): Promise<Pool | undefined> {
  return inTransaction(db, async (trx) => {
    // First, so that every writer takes the key record before any pool row (store-secrets.ts).
    const sealer = await secrets.sealer(trx);
    const row = await trx
      .selectFrom('pools')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .$if(dialect === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const current = rowToPool(row, secrets);
    const next = change(current);
    await checkReferences(trx, accountId, next, id);
    await guard?.(trx, next, current);
    const now = timestamp(clock);
    const stamped = stampDisabled(current, next, now);
    try {
      await trx
        .updateTable('pools')
        .set({ ...fieldsToColumns(stamped, sealer, id), modified_on: now, version: sql`version + 1` })
        .where('id', '=', id)
        .execute();
    } catch (err) {
      throw isUniqueViolation(err) ? duplicateName(next.name) : err;
    }
    return { ...stamped, id, account_id: accountId, created_on: current.created_on, modified_on: now };
  });
}

/**
 * Deletes one pool; `guard` may refuse (throw) after seeing its identity. False when it does not exist.
 * Reads only the columns, so an undecodable row can still be deleted.
 */
export async function deletePool(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  guard: (pool: Pick<Pool, 'id' | 'account_id' | 'name'>) => void = () => {},
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const pool = await trx
      .selectFrom('pools')
      .select(['id', 'account_id', 'name'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
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
  secrets: Opener,
  dialect: Dialect,
  clock: Clock,
  accountId: string,
  window: PageWindow,
  onCorrupt?: OnCorruptPool,
): Promise<{ pools: Pool[]; total: number }> {
  return inTransaction(db, async (trx) => {
    // Decided on the columns alone, so an undecodable row on the page is cleared like the others.
    const { rows, total } = await pageRows(trx, dialect, accountId, window);
    const ids = rows.filter((row) => row.notification_email !== '').map((row) => row.id);
    if (ids.length === 0) return { pools: rowsToPools(rows, secrets, onCorrupt), total };
    await trx
      .updateTable('pools')
      .set({ notification_email: '', modified_on: timestamp(clock), version: sql`version + 1` })
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    const changed = new Map(
      (await trx.selectFrom('pools').selectAll().where('id', 'in', ids).execute()).map((row) => [row.id, row]),
    );
    return {
      pools: rowsToPools(
        rows.map((row) => changed.get(row.id) ?? row),
        secrets,
        onCorrupt,
      ),
      total,
    };
  });
}

/** The id and name of every pool of the account, by name (readable even when a row's settings are not). */
export async function poolNamesOf(db: Kysely<Database>, accountId: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('pools')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/** Ids among `ids` that are pools of this account (policy `filters.pool_id` must name only those). */
export async function existingPoolIds(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('pools')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((row) => row.id));
}
