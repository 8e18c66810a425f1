/**
 * The `health_events` table's one owner: health writes events (round.ts, in the transaction that commits
 * a state change), notifications read them after the dispatcher's cursor and prune dispatched ones
 * (notifications/queries/retention.ts), the API reads them for pools. PostgreSQL returns `bigserial`
 * values as strings, hence the Number() on `seq`.
 */
import type { Db } from '../store/database.js';
import type { HealthEventsTable } from '../store/tables/health.js';

export type HealthEventInput = Omit<HealthEventsTable, 'seq'>;
export interface HealthEventRow extends HealthEventInput {
  seq: number;
}

export async function insertHealthEvent(db: Db, event: HealthEventInput): Promise<void> {
  await db.insertInto('health_events').values(event).execute();
}

/** Events after `afterSeq`, oldest first: the notification dispatcher's feed. */
export async function readHealthEvents(
  db: Db,
  options: { afterSeq: number; limit?: number; poolId?: string },
): Promise<HealthEventRow[]> {
  let query = db
    .selectFrom('health_events')
    .selectAll()
    .where('seq', '>', options.afterSeq)
    .orderBy('seq', 'asc')
    .limit(options.limit ?? 100);
  if (options.poolId !== undefined) query = query.where('pool_id', '=', options.poolId);
  const rows = await query.execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

export async function latestHealthEventSeq(db: Db): Promise<number> {
  const row = await db
    .selectFrom('health_events')
    .select((eb) => eb.fn.max('seq').as('max'))
    .executeTakeFirst();
  return row?.max === null || row?.max === undefined ? 0 : Number(row.max);
}

/** Events after `seq`, oldest first, at most `limit`: the notification dispatcher's feed. */
export async function readEventsAfter(db: Db, seq: number, limit: number): Promise<HealthEventRow[]> {
  const rows = await db
    .selectFrom('health_events')
    .selectAll()
    .where('seq', '>', seq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

export async function readEventsBySeq(db: Db, seqs: readonly number[]): Promise<HealthEventRow[]> {
  if (seqs.length === 0) return [];
  const rows = await db
    .selectFrom('health_events')
    .selectAll()
    .where('seq', 'in', [...seqs])
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/**
 * Deletes events at or below the dispatcher's `cursor` (already turned into deliveries) that occurred
 * before `cutoff`, in batches of `batch` until a batch deletes nothing; returns how many went.
 */
export async function pruneDispatchedEvents(db: Db, cursor: number, cutoff: string, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const seqs = await db
      .selectFrom('health_events')
      .select('seq')
      .where('seq', '<=', cursor)
      .where('occurred_at', '<', cutoff)
      .orderBy('seq')
      .limit(batch)
      .execute();
    if (seqs.length === 0) return total;
    const result = await db
      .deleteFrom('health_events')
      .where(
        'seq',
        'in',
        seqs.map((row) => Number(row.seq)),
      )
      .executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    total += deleted;
    if (deleted === 0) return total;
  }
}

/** Filter of the API's events timeline (api/routes/health-events.ts). */
export interface EventFilter {
  poolId?: string | undefined;
  /** RFC 3339 (toISOString form): only events at or after it. */
  since?: string | undefined;
}

function accountEvents(db: Db, accountId: string, filter: EventFilter) {
  return db
    .selectFrom('health_events')
    .where('account_id', '=', accountId)
    .$if(filter.poolId !== undefined, (qb) => qb.where('pool_id', '=', filter.poolId as string))
    .$if(filter.since !== undefined, (qb) => qb.where('occurred_at', '>=', filter.since as string));
}

/** An account's events, newest first (by `seq`, the order they were recorded in). */
export async function listAccountEvents(
  db: Db,
  accountId: string,
  filter: EventFilter,
  limit: number,
  offset: number,
): Promise<HealthEventRow[]> {
  const rows = await accountEvents(db, accountId, filter)
    .selectAll()
    .orderBy('seq', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

export async function countAccountEvents(db: Db, accountId: string, filter: EventFilter): Promise<number> {
  const row = await accountEvents(db, accountId, filter)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
