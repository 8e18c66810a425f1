/**
 * Queries for account-level notification policies (`/alerting/v3/policies`). Every query is scoped by
 * account id, so one account never reads or changes another's policies. Filters and mechanisms are
 * stored as JSON text exactly as validated by the API (every filter value an array of strings).
 */

import type { Db } from '../../store/database.js';
import type { NotificationPoliciesTable } from '../../store/tables/notifications.js';

export interface PolicyMechanisms {
  email?: { id: string }[];
  webhooks?: { id: string }[];
}

export interface Policy {
  id: string;
  account_id: string;
  name: string;
  description: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: PolicyMechanisms;
  filters: Record<string, string[]>;
  alert_interval: string | null;
  created: string;
  modified: string;
}

/** The writable fields of a policy, already validated. */
export type PolicyInput = Pick<
  Policy,
  'name' | 'description' | 'enabled' | 'alert_type' | 'mechanisms' | 'filters' | 'alert_interval'
>;

function toPolicy(row: NotificationPoliciesTable): Policy {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    description: row.description,
    enabled: Number(row.enabled) === 1,
    alert_type: row.alert_type,
    mechanisms: JSON.parse(row.mechanisms) as PolicyMechanisms,
    filters: JSON.parse(row.filters) as Record<string, string[]>,
    alert_interval: row.alert_interval,
    created: row.created,
    modified: row.modified,
  };
}

export async function countPolicies(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('notification_policies')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page, oldest first (ties by id), so pages stay stable while policies are added. */
export async function listPolicies(db: Db, accountId: string, limit: number, offset: number): Promise<Policy[]> {
  const rows = await db
    .selectFrom('notification_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toPolicy);
}

export async function getPolicy(db: Db, accountId: string, id: string): Promise<Policy | undefined> {
  const row = await db
    .selectFrom('notification_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toPolicy(row);
}

/** Enabled policies of an account with this alert type: what the dispatcher matches events against. */
export async function enabledPolicies(db: Db, accountId: string, alertType: string): Promise<Policy[]> {
  const rows = await db
    .selectFrom('notification_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('alert_type', '=', alertType)
    .where('enabled', '=', 1)
    .orderBy('created')
    .orderBy('id')
    .execute();
  return rows.map(toPolicy);
}

/** The columns a create or an update writes from the API input (booleans 0/1, JSON as text). */
function writableColumns(input: PolicyInput) {
  return {
    name: input.name,
    description: input.description,
    enabled: input.enabled ? 1 : 0,
    alert_type: input.alert_type,
    mechanisms: JSON.stringify(input.mechanisms),
    filters: JSON.stringify(input.filters),
    alert_interval: input.alert_interval,
  };
}

export async function insertPolicy(
  db: Db,
  accountId: string,
  id: string,
  input: PolicyInput,
  now: string,
): Promise<void> {
  await db
    .insertInto('notification_policies')
    .values({ id, account_id: accountId, ...writableColumns(input), created: now, modified: now })
    .execute();
}

/** Replaces the writable fields; false when the policy does not exist in this account. */
export async function updatePolicy(
  db: Db,
  accountId: string,
  id: string,
  input: PolicyInput,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('notification_policies')
    .set({ ...writableColumns(input), modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deletePolicy(db: Db, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('notification_policies')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Policies of the account that send to this webhook destination (a destination in use cannot be deleted). */
export async function policiesUsingDestination(db: Db, accountId: string, destinationId: string): Promise<Policy[]> {
  const rows = await db.selectFrom('notification_policies').selectAll().where('account_id', '=', accountId).execute();
  return rows.map(toPolicy).filter((policy) => policy.mechanisms.webhooks?.some((hook) => hook.id === destinationId));
}
