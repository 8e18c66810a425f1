/**
 * The rules every pool write (pool-queries.ts `createPool`, `updatePool`) follows inside its transaction:
 * - the monitor it names exists in the same account (else API_VALIDATION on `/monitor`);
 * - no other pool of the account has its name (else API_NOT_UNIQUE on `/name`; the unique index
 *   catches a race between two writers, reported the same way);
 * - `disabled_at` (pool and origin): set when `enabled` turns false, kept while it stays false, dropped
 *   when it turns true again.
 */
import type { Kysely } from 'kysely';
import { SwitchyardError } from '../errors/base.js';
import type { Pool, PoolFields } from '../model/pool.js';
import type { Database } from '../store/schema.js';

/** Refuses a write whose monitor is not the account's or whose name another pool of the account has. */
export async function checkReferences(
  db: Kysely<Database>,
  accountId: string,
  fields: PoolFields,
  selfId: string | undefined,
): Promise<void> {
  if (fields.monitor !== null) {
    const monitor = await db
      .selectFrom('monitors')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', fields.monitor)
      .executeTakeFirst();
    if (monitor === undefined) {
      throw new SwitchyardError('API_VALIDATION', `monitor: no monitor with id "${fields.monitor}" in this account`, {
        details: { pointer: '/monitor' },
      });
    }
  }
  let clash = db.selectFrom('pools').select('id').where('account_id', '=', accountId).where('name', '=', fields.name);
  if (selfId !== undefined) clash = clash.where('id', '<>', selfId);
  if ((await clash.executeTakeFirst()) !== undefined) throw duplicateName(fields.name);
}

export function duplicateName(name: string): SwitchyardError {
  return new SwitchyardError('API_NOT_UNIQUE', `name: a pool named "${name}" already exists in this account`, {
    details: { pointer: '/name' },
  });
}

/** Applies the disabled_at rule (see the header) to the pool and each origin (matched by name). */
export function stampDisabled(current: Pool | undefined, next: PoolFields, now: string): PoolFields {
  const since = (wasEnabled: boolean | undefined, was: string | undefined, enabled: boolean) =>
    enabled ? undefined : wasEnabled === false ? (was ?? now) : now;
  const previousOrigins = new Map((current?.origins ?? []).map((origin) => [origin.name, origin]));
  const origins = next.origins.map((origin) => {
    const { disabled_at: _ignored, ...rest } = origin;
    const before = previousOrigins.get(origin.name);
    const at = since(before?.enabled, before?.disabled_at, origin.enabled);
    return at === undefined ? rest : { ...rest, disabled_at: at };
  });
  const { disabled_at: _ignored, ...rest } = next;
  const at = since(current?.enabled, current?.disabled_at, next.enabled);
  return at === undefined ? { ...rest, origins } : { ...rest, origins, disabled_at: at };
}
