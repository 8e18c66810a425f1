import { maskAddress } from '../model/origin-address.js';
import type { Origin } from '../model/pool.js';
import type { Db } from '../store/database.js';
import { ReusableQuery } from '../store/reusable-query.js';
import type { OriginHealthTable, PoolHealthTable } from '../store/tables/health.js';

/**
 * Queries on the health state tables (origin_health, pool_health, leases; the events are events.ts). State writes are compare-and-set on `generation`: an insert of a new row
 * succeeds only when no row exists, an update only when the row still has the generation the writer read.
 * A `false` return means another process wrote first; the caller re-reads and drops its own result.
 * PostgreSQL returns `bigserial` values as strings, hence the Number() on `seq`.
 * The statements every round runs (lease, reading one pool's rows, the origin compare-and-sets) are
 * `ReusableQuery`s: built and compiled once, not per round.
 */

export type OriginHealthRow = OriginHealthTable;
export type PoolHealthRow = PoolHealthTable;

const stateAddresses = new WeakMap<Origin, string>();

/**
 * What `origin_health.origin_address` holds for an origin: its masked address, so no credential is
 * stored there (store/tables/health.ts). A row whose address differs was measured elsewhere and does not
 * count. Kept per Origin object: the gateway asks on every forwarded call.
 */
export function stateAddress(origin: Origin): string {
  let address = stateAddresses.get(origin);
  if (address === undefined) {
    address = maskAddress(origin.address);
    stateAddresses.set(origin, address);
  }
  return address;
}
const selectPoolOrigins = new ReusableQuery(['pool_id'], (db, v) =>
  db
    .selectFrom('origin_health')
    .selectAll()
    .where('pool_id', '=', v.pool_id as string),
);

const selectPool = new ReusableQuery(['pool_id'], (db, v) =>
  db
    .selectFrom('pool_health')
    .selectAll()
    .where('pool_id', '=', v.pool_id as string),
);

export async function loadOriginHealth(db: Db, poolIds?: readonly string[]): Promise<OriginHealthRow[]> {
  if (poolIds !== undefined && poolIds.length === 0) return [];
  if (poolIds?.length === 1)
    return (await selectPoolOrigins.run(db, { pool_id: poolIds[0] })).rows.map(normaliseOrigin);
  let query = db.selectFrom('origin_health').selectAll();
  if (poolIds !== undefined) query = query.where('pool_id', 'in', poolIds);
  return (await query.execute()).map(normaliseOrigin);
}

/**
 * The origin rows of every pool whose lease `owner` does not hold (what other processes checked, or
 * rows of pools nobody checks now): the periodic refresh of a process skips the pools it checks itself.
 */
export async function loadOriginHealthNotLeasedBy(db: Db, owner: string): Promise<OriginHealthRow[]> {
  const rows = await db
    .selectFrom('origin_health')
    .selectAll()
    .where('pool_id', 'not in', db.selectFrom('pool_health').select('pool_id').where('lease_owner', '=', owner))
    .execute();
  return rows.map(normaliseOrigin);
}

export async function loadPoolHealth(db: Db, poolIds?: readonly string[]): Promise<PoolHealthRow[]> {
  if (poolIds !== undefined && poolIds.length === 0) return [];
  const normalise = (row: PoolHealthRow) => ({ ...row, generation: Number(row.generation) });
  if (poolIds?.length === 1) return (await selectPool.run(db, { pool_id: poolIds[0] })).rows.map(normalise);
  let query = db.selectFrom('pool_health').selectAll();
  if (poolIds !== undefined) query = query.where('pool_id', 'in', poolIds);
  return (await query.execute()).map(normalise);
}

const ORIGIN_STATE = [
  'origin_address',
  'status',
  'failures',
  'successes',
  'last_ok',
  'failure_reason',
  'response_code',
  'rtt_ms',
  'checked_at',
  'changed_at',
  'generation',
] as const;

const insertOrigin = new ReusableQuery(['pool_id', 'origin_name', ...ORIGIN_STATE], (db, v) =>
  db
    .insertInto('origin_health')
    .values(v as OriginHealthRow)
    .onConflict((oc) => oc.columns(['pool_id', 'origin_name']).doNothing()),
);

const updateOrigin = new ReusableQuery(['pool_id', 'origin_name', 'expected', ...ORIGIN_STATE], (db, v) => {
  const { pool_id, origin_name, expected, ...rest } = v;
  return db
    .updateTable('origin_health')
    .set(rest as Omit<OriginHealthRow, 'pool_id' | 'origin_name'>)
    .where('pool_id', '=', pool_id as string)
    .where('origin_name', '=', origin_name as string)
    .where('generation', '=', expected as number);
});

/** Writes `row` if the stored generation is still `expected` (null: no row yet). */
export async function casOriginHealth(db: Db, row: OriginHealthRow, expected: number | null): Promise<boolean> {
  const result = expected === null ? await insertOrigin.run(db, row) : await updateOrigin.run(db, { ...row, expected });
  return Number(result.numAffectedRows ?? 0) === 1;
}

/** Writes the pool's state (not its lease) if the stored generation is still `expected` (null: no row yet). */
export async function casPoolHealth(
  db: Db,
  row: Pick<PoolHealthRow, 'pool_id' | 'account_id' | 'status' | 'changed_at' | 'generation'>,
  expected: number | null,
): Promise<boolean> {
  if (expected === null) {
    const result = await db
      .insertInto('pool_health')
      .values({ ...row, lease_owner: null, lease_until: null })
      .onConflict((oc) => oc.column('pool_id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
  const result = await db
    .updateTable('pool_health')
    .set({ status: row.status, changed_at: row.changed_at, generation: row.generation })
    .where('pool_id', '=', row.pool_id)
    .where('generation', '=', expected)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Takes or renews the checker lease of a pool: succeeds when nobody holds it, `owner` already holds it,
 * or the holder's lease ran out. Creates the pool's row (status Unknown) when missing. One statement
 * (an upsert whose update is conditional), since every round of every pool starts with it.
 */
export async function acquirePoolLease(
  db: Db,
  lease: { pool_id: string; account_id: string; owner: string; now: string; until: string },
): Promise<boolean> {
  const result = await takeLease.run(db, lease);
  return Number(result.numAffectedRows ?? 0) === 1;
}

const takeLease = new ReusableQuery(['pool_id', 'account_id', 'owner', 'now', 'until'], (db, v) => {
  const owner = v.owner as string;
  const until = v.until as string;
  return db
    .insertInto('pool_health')
    .values({
      pool_id: v.pool_id as string,
      account_id: v.account_id as string,
      status: 'Unknown',
      changed_at: null,
      generation: 0,
      lease_owner: owner,
      lease_until: until,
    })
    .onConflict((oc) =>
      oc
        .column('pool_id')
        .doUpdateSet({ lease_owner: owner, lease_until: until })
        .where((eb) =>
          eb.or([
            eb('pool_health.lease_owner', 'is', null),
            eb('pool_health.lease_owner', '=', owner),
            eb('pool_health.lease_until', 'is', null),
            eb('pool_health.lease_until', '<', v.now as string),
          ]),
        ),
    );
});

/** Gives up every lease `owner` holds (clean shutdown), so another process takes over at once. */
export async function releasePoolLeases(db: Db, owner: string): Promise<void> {
  await db
    .updateTable('pool_health')
    .set({ lease_owner: null, lease_until: null })
    .where('lease_owner', '=', owner)
    .execute();
}

/** Forgets the state of origins no longer monitored (removed, disabled, address changed). */
export async function deleteOriginHealth(db: Db, poolId: string, originNames: readonly string[]): Promise<void> {
  if (originNames.length === 0) return;
  await db.deleteFrom('origin_health').where('pool_id', '=', poolId).where('origin_name', 'in', originNames).execute();
}

/** Forgets every health row of pools that no longer exist. */
export async function deletePoolHealth(db: Db, poolIds: readonly string[]): Promise<void> {
  if (poolIds.length === 0) return;
  await db.deleteFrom('origin_health').where('pool_id', 'in', poolIds).execute();
  await db.deleteFrom('pool_health').where('pool_id', 'in', poolIds).execute();
}

function normaliseOrigin(row: OriginHealthRow): OriginHealthRow {
  return {
    ...row,
    failures: Number(row.failures),
    successes: Number(row.successes),
    last_ok: Number(row.last_ok),
    response_code: row.response_code === null ? null : Number(row.response_code),
    rtt_ms: row.rtt_ms === null ? null : Number(row.rtt_ms),
    generation: Number(row.generation),
  };
}
