/**
 * Accounts: the unit of ownership. Every pool, monitor, token and policy belongs to exactly one, and
 * the API never shows one account's objects to another's token. Ids are 32 lowercase hex.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { ID_PATTERN, isUniqueViolation, newId, timestamp } from '../store/ids.js';
import type { Database } from '../store/schema.js';

export interface Account {
  id: string;
  name: string;
  created_on: string;
}

export function isAccountId(value: string): boolean {
  return ID_PATTERN.test(value);
}

export async function findAccount(db: Kysely<Database>, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').select(['id', 'name', 'created_on']).where('id', '=', id).executeTakeFirst();
}

/** Inserts a new account; `undefined` when the id is already taken. */
export async function createAccount(
  db: Kysely<Database>,
  clock: Clock,
  input: { id?: string | undefined; name?: string | undefined },
): Promise<Account | undefined> {
  const id = input.id ?? newId();
  if (!isAccountId(id)) throw new Error(`account id "${id}" must be 32 lowercase hex characters`);
  const account: Account = { id, name: input.name ?? '', created_on: timestamp(clock) };
  try {
    await db.insertInto('accounts').values(account).execute();
    return account;
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
}

/** Creates the account unless it exists (several processes may race on a shared PostgreSQL). */
export async function ensureAccount(db: Kysely<Database>, clock: Clock, id: string, name: string): Promise<Account> {
  const found = await findAccount(db, id);
  if (found !== undefined) return found;
  const created = await createAccount(db, clock, { id, name });
  if (created !== undefined) return created;
  const raced = await findAccount(db, id);
  if (raced === undefined) throw new Error(`account ${id} could not be created`);
  return raced;
}
