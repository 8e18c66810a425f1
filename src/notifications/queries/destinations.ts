/**
 * Queries for webhook destinations (`/alerting/v3/destinations/webhooks`). The secret is write-only:
 * `WebhookDestination` (what the API returns) has no secret field at all; only the sender reads it,
 * through `getDestinationSecret`. `last_success` / `last_failure` are kept current by every delivery
 * attempt and by the test message sent on create/update.
 */

import type { Db } from '../../store/database.js';
import type { WebhookDestinationsTable } from '../../store/tables/notifications.js';

export interface WebhookDestination {
  id: string;
  account_id: string;
  name: string;
  url: string;
  type: string;
  created_at: string;
  last_success: string | null;
  last_failure: string | null;
}

const PUBLIC_COLUMNS = [
  'id',
  'account_id',
  'name',
  'url',
  'type',
  'created_at',
  'last_success',
  'last_failure',
] as const;

function toDestination(row: Omit<WebhookDestinationsTable, 'secret'>): WebhookDestination {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    url: row.url,
    type: row.type,
    created_at: row.created_at,
    last_success: row.last_success,
    last_failure: row.last_failure,
  };
}

export async function countDestinations(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_destinations')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function listDestinations(
  db: Db,
  accountId: string,
  limit: number,
  offset: number,
): Promise<WebhookDestination[]> {
  const rows = await db
    .selectFrom('webhook_destinations')
    .select(PUBLIC_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toDestination);
}

export async function getDestination(db: Db, accountId: string, id: string): Promise<WebhookDestination | undefined> {
  const row = await db
    .selectFrom('webhook_destinations')
    .select(PUBLIC_COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toDestination(row);
}

/** The destination's URL and secret, for the sender only. Never serialise the result. */
export async function getDestinationTarget(
  db: Db,
  id: string,
): Promise<{ account_id: string; url: string; secret: string | null } | undefined> {
  return db
    .selectFrom('webhook_destinations')
    .select(['account_id', 'url', 'secret'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Ids among `ids` that are destinations of this account. */
export async function existingDestinationIds(db: Db, accountId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('webhook_destinations')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((row) => row.id));
}

export interface DestinationWrite {
  name: string;
  url: string;
  secret: string | null;
}

export async function insertDestination(
  db: Db,
  accountId: string,
  id: string,
  input: DestinationWrite,
  now: string,
): Promise<void> {
  await db
    .insertInto('webhook_destinations')
    .values({
      id,
      account_id: accountId,
      name: input.name,
      url: input.url,
      secret: input.secret,
      type: 'generic',
      created_at: now,
      last_success: now, // the test message just succeeded
      last_failure: null,
    })
    .execute();
}

/** `secret: undefined` keeps the stored secret; `null` removes it. */
export async function updateDestination(
  db: Db,
  accountId: string,
  id: string,
  input: { name: string; url: string; secret: string | null | undefined },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_destinations')
    .set({
      name: input.name,
      url: input.url,
      ...(input.secret === undefined ? {} : { secret: input.secret }),
      last_success: now,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteDestination(db: Db, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_destinations')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Records the outcome of a delivery attempt or test message. */
export async function recordDestinationOutcome(db: Db, id: string, ok: boolean, at: string): Promise<void> {
  await db
    .updateTable('webhook_destinations')
    .set(ok ? { last_success: at } : { last_failure: at })
    .where('id', '=', id)
    .execute();
}
