/**
 * Reading the `chain_incidents` table for one account (the API's incidents list): the incidents whose
 * scope names the account (it owned a pool of the network when the incident began), newest first
 * (`opened_at`, ties by id), optionally only open or only closed ones, or those of one network. Closed
 * incidents stay until the notification retention prunes them (notifications/queries/retention.ts).
 *
 * The scope is JSON text written by JSON.stringify (`[{"account_id":"…","pool_id":"…"}]`), and account ids
 * are 32 lowercase hex, so `"account_id":"<id>"` as a substring names exactly that account's entries: one
 * LIKE that works alike on SQLite and PostgreSQL, with no JSON functions of either.
 */
import type { Db } from '../store/database.js';
import { ID_PATTERN } from '../store/ids.js';
import { toRecord } from './queries.js';
import type { IncidentRecord } from './types.js';

export interface IncidentListFilter {
  status?: 'open' | 'closed' | undefined;
  network?: string | undefined;
}

function accountIncidents(db: Db, accountId: string, filter: IncidentListFilter) {
  // The shape check keeps LIKE's wildcards (% and _) out of the pattern's variable part.
  if (!ID_PATTERN.test(accountId)) throw new Error(`not an account id: ${accountId.slice(0, 40)}`);
  let query = db.selectFrom('chain_incidents').where('scope', 'like', `%"account_id":"${accountId}"%`);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.network !== undefined) query = query.where('network', '=', filter.network);
  return query;
}

export async function countAccountIncidents(db: Db, accountId: string, filter: IncidentListFilter): Promise<number> {
  const row = await accountIncidents(db, accountId, filter)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listAccountIncidents(
  db: Db,
  accountId: string,
  filter: IncidentListFilter,
  limit: number,
  offset: number,
): Promise<IncidentRecord[]> {
  const rows = await accountIncidents(db, accountId, filter)
    .selectAll()
    .orderBy('opened_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toRecord);
}
