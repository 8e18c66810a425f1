/**
 * Queries for webhook destinations (`/alerting/v3/destinations/webhooks`). The secret is write-only:
 * `WebhookDestination` (what the API returns) has no secret field at all; only the sender and the API's
 * PUT (to keep a secret sent back as `***`) read it, through `getDestinationTarget`. `last_success` /
 * `last_failure` are kept current by every delivery attempt and by the test message sent on create/update.
 *
 * Secrets at rest (store/sealed-fields.ts): the URL's secret parts (what `maskAddress` hides) and the
 * secret are sealed together in `sealed` (context `webhook_destinations/<id>`); the `url` column then
 * holds the masked URL and `secret` is null. Rows written before migration 010 hold both in the clear
 * until the next start seals them (`resealDestinations`, secrets/reseal.ts).
 */

import type { Db } from '../../store/database.js';
import { joinSecrets, splitSecrets } from '../../store/sealed-fields.js';
import { isJsonObject } from '../../store/sealed-settings.js';
import { SealedValueError, sealedKeyId } from '../../store/secret-box.js';
import { type Opener, openJson, type Sealer, type StoreSecrets, sealJson } from '../../store/store-secrets.js';
import type { WebhookDestinationsTable } from '../../store/tables/notifications.js';
import { inTransaction } from '../../store/transaction.js';

export interface WebhookDestination {
  id: string;
  account_id: string;
  name: string;
  /** The URL as stored: masked when it holds a secret (then sealed); show it through `maskAddress`. */
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

function toDestination(row: Omit<WebhookDestinationsTable, 'secret' | 'sealed'>): WebhookDestination {
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

/** What of a destination is secret: the URL's secret parts and the whole secret. */
const TARGET_SECRETS = { url: 'address', secret: 'whole' } as const;

export interface DestinationTarget {
  account_id: string;
  url: string;
  secret: string | null;
}

const contextOf = (id: string) => `webhook_destinations/${id}`;

/** The row's URL and secret, opened; throws SealedValueError when `sealed` does not open. */
function openTarget(row: Pick<WebhookDestinationsTable, 'id' | 'url' | 'secret' | 'sealed'>, opener: Opener) {
  const clear = { url: row.url, secret: row.secret };
  if (row.sealed === null) return clear;
  const parts = openJson(opener, row.sealed, contextOf(row.id));
  if (!isJsonObject(parts)) throw new SealedValueError('the sealed webhook secrets are not an object');
  return joinSecrets(clear, parts, TARGET_SECRETS);
}

/** The columns that hold a destination's URL and secret, sealed with `sealer`. */
function targetColumns(id: string, target: { url: string; secret: string | null }, sealer: Sealer) {
  const { clear, secrets } = splitSecrets(target, TARGET_SECRETS);
  return {
    url: clear.url,
    secret: clear.secret,
    sealed: secrets === undefined ? null : sealJson(sealer, secrets, contextOf(id)),
  };
}

/** The destination's full URL and secret, for the sender and the API's PUT only. Never serialise the result. */
export async function getDestinationTarget(
  db: Db,
  secrets: Opener,
  id: string,
): Promise<DestinationTarget | undefined> {
  const row = await db
    .selectFrom('webhook_destinations')
    .select(['id', 'account_id', 'url', 'secret', 'sealed'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : { account_id: row.account_id, ...openTarget(row, secrets) };
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
  secrets: StoreSecrets,
  accountId: string,
  id: string,
  input: DestinationWrite,
  now: string,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const sealer = await secrets.sealer(trx);
    await trx
      .insertInto('webhook_destinations')
      .values({
        id,
        account_id: accountId,
        name: input.name,
        ...targetColumns(id, input, sealer),
        type: 'generic',
        created_at: now,
        last_success: now, // the test message just succeeded
        last_failure: null,
      })
      .execute();
  });
}

/** Replaces name, URL and secret (`null`: none); false when the destination does not exist in the account. */
export async function updateDestination(
  db: Db,
  secrets: StoreSecrets,
  accountId: string,
  id: string,
  input: DestinationWrite,
  now: string,
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const sealer = await secrets.sealer(trx);
    const result = await trx
      .updateTable('webhook_destinations')
      .set({ name: input.name, ...targetColumns(id, input, sealer), last_success: now })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  });
}

/**
 * Seals every destination whose URL or secret is in the clear, or sealed under another key than
 * `sealer`'s (secrets/reseal.ts). Returns how many rows were rewritten.
 */
export async function resealDestinations(db: Db, opener: Opener, sealer: Sealer): Promise<number> {
  const rows = await db.selectFrom('webhook_destinations').select(['id', 'url', 'secret', 'sealed']).execute();
  let changed = 0;
  for (const row of rows) {
    const needed =
      row.sealed === null
        ? splitSecrets({ url: row.url, secret: row.secret }, TARGET_SECRETS).secrets !== undefined
        : sealedKeyId(row.sealed) !== sealer.keyId;
    if (!needed) continue;
    const columns = targetColumns(row.id, openTarget(row, opener), sealer);
    await db.updateTable('webhook_destinations').set(columns).where('id', '=', row.id).execute();
    changed += 1;
  }
  return changed;
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
