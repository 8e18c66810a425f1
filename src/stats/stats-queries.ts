/**
 * Store queries of `origin_stats` (migration 007). Writes are additive upserts (`requests = requests +
 * n`, each bucket likewise), so any number of processes flush into the same row without reading it.
 */
import { type Kysely, sql } from 'kysely';
import type { StatsRow } from '../model/origin-stats.js';
import { LATENCY_BUCKETS } from '../model/origin-stats.js';
import type { Database } from '../store/schema.js';
import type { OriginStatsTable } from '../store/tables/stats.js';

/** 19 parameters a row: 200 rows stay below SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 200;
const BUCKET_COLUMNS = LATENCY_BUCKETS.map((_, i) => `b${i}` as const);

type BucketColumn = (typeof BUCKET_COLUMNS)[number];

/** Adds these counts in one transaction; rows must be distinct by (pool, origin, minute) (mergeRows). */
export async function addStats(db: Kysely<Database>, rows: readonly StatsRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => {
    const value: Record<string, unknown> = {
      pool_id: row.pool_id,
      origin_name: row.origin_name,
      minute: row.minute,
      requests: row.requests,
      errors: row.errors,
    };
    for (const [i, column] of BUCKET_COLUMNS.entries()) value[column] = row.buckets[i] ?? 0;
    return value as unknown as OriginStatsTable;
  });
  const update: Record<string, unknown> = {
    requests: sql`origin_stats.requests + excluded.requests`,
    errors: sql`origin_stats.errors + excluded.errors`,
  };
  for (const column of BUCKET_COLUMNS) update[column] = sql.raw(`origin_stats.${column} + excluded.${column}`);
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < values.length; i += CHUNK) {
      await tx
        .insertInto('origin_stats')
        .values(values.slice(i, i + CHUNK))
        .onConflict((oc) => oc.columns(['pool_id', 'origin_name', 'minute']).doUpdateSet(update as never))
        .execute();
    }
  });
}

/** The rows of these pools from `sinceMinute` on (inclusive), as numbers. */
export async function statsSince(
  db: Kysely<Database>,
  poolIds: readonly string[],
  sinceMinute: number,
): Promise<StatsRow[]> {
  if (poolIds.length === 0) return [];
  const rows = await db
    .selectFrom('origin_stats')
    .selectAll()
    .where('pool_id', 'in', poolIds)
    .where('minute', '>=', sinceMinute)
    .orderBy('minute', 'asc')
    .execute();
  return rows.map((row) => ({
    pool_id: row.pool_id,
    origin_name: row.origin_name,
    minute: Number(row.minute),
    requests: Number(row.requests),
    errors: Number(row.errors),
    buckets: BUCKET_COLUMNS.map((column: BucketColumn) => Number((row as unknown as Record<string, unknown>)[column])),
  }));
}

/** Deletes rows older than `beforeMinute`. */
export async function pruneStats(db: Kysely<Database>, beforeMinute: number): Promise<void> {
  await db.deleteFrom('origin_stats').where('minute', '<', beforeMinute).execute();
}
