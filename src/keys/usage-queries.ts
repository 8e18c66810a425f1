/**
 * Store queries of gateway key usage (table `gateway_key_usage`, migration 006): calls per key, UTC day
 * and network. Writes are additive upserts (`requests = requests + n`), so any number of processes may
 * flush their counts for the same row without reading it first or losing each other's counts.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../store/schema.js';

export interface UsageRow {
  key_id: string;
  /** YYYY-MM-DD, UTC. */
  date: string;
  network: string;
  requests: number;
  errors: number;
}

/** Rows per upsert statement: 5 parameters each stays far below either backend's parameter limit. */
const CHUNK = 500;

/**
 * Adds these counts, in one transaction of multi-row upserts. Rows must be distinct by
 * (key_id, date, network) — PostgreSQL refuses to update one row twice in one statement.
 */
export async function addUsage(db: Kysely<Database>, rows: readonly UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += CHUNK) {
      await tx
        .insertInto('gateway_key_usage')
        .values(rows.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc.columns(['key_id', 'date', 'network']).doUpdateSet({
            requests: sql`gateway_key_usage.requests + excluded.requests`,
            errors: sql`gateway_key_usage.errors + excluded.errors`,
          }),
        )
        .execute();
    }
  });
}

/** A key's usage from `since` to `until` (dates, inclusive), by date then network. */
export async function usageBetween(
  db: Kysely<Database>,
  keyId: string,
  since: string,
  until: string,
): Promise<Array<{ date: string; network: string; requests: number; errors: number }>> {
  const rows = await db
    .selectFrom('gateway_key_usage')
    .select(['date', 'network', 'requests', 'errors'])
    .where('key_id', '=', keyId)
    .where('date', '>=', since)
    .where('date', '<=', until)
    .orderBy('date', 'asc')
    .orderBy('network', 'asc')
    .execute();
  return rows.map((row) => ({
    date: row.date,
    network: row.network,
    requests: Number(row.requests),
    errors: Number(row.errors),
  }));
}

/** Requests of every key on `date` (all networks together): what the daily quota has spent. */
export async function requestsOn(db: Kysely<Database>, date: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('gateway_key_usage')
    .select((eb) => ['key_id', eb.fn.sum<number | string>('requests').as('requests')])
    .where('date', '=', date)
    .groupBy('key_id')
    .execute();
  return new Map(rows.map((row) => [row.key_id, Number(row.requests)]));
}
