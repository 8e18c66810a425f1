/**
 * Monitors in the store: one row per monitor, every field (defaults filled in) as JSON `settings`.
 * Lists are ordered by (created_on, id) so pages are stable. A monitor used by a pool cannot be
 * deleted: the delete runs in a transaction that first looks for pools naming it (pools.monitor_id
 * is also a foreign key, so a racing writer cannot slip past).
 *
 * Reading rows is defensive, as for pools: `settings` must be a JSON object whose fields have the
 * stored types (missing ones take their defaults). A row that is not — a hand edit, a bad restore —
 * is skipped by lists and reported through `onCorrupt`; a read of that one monitor throws
 * `CorruptMonitorError` (the API answers a logged 500; the health engine logs it and retries next round).
 *
 * The values of secret headers are sealed in `settings` (store/sealed-settings.ts, context
 * `monitors/<id>`); the clear copy shows them as `***`. Reads take an `Opener`, writes the `StoreSecrets`
 * (store/store-secrets.ts), whose sealer they take first in their transaction.
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import { MONITOR_TYPES, type MonitorSettings, withMonitorDefaults } from '../model/monitor-schema.js';
import { newId, timestamp } from '../store/ids.js';
import type { PageWindow } from '../store/page-window.js';
import { ReusableQuery } from '../store/reusable-query.js';
import type { Database } from '../store/schema.js';
import { joinSecrets, splitSecrets } from '../store/sealed-fields.js';
import {
  isJsonObject,
  openSettings,
  resealSettings,
  type SettingsSecrets,
  sealSettings,
  settingsContext,
} from '../store/sealed-settings.js';
import { SealedValueError } from '../store/secret-box.js';
import type { Opener, Sealer, StoreSecrets } from '../store/store-secrets.js';
import type { MonitorsTable } from '../store/tables/core.js';
import { inTransaction } from '../store/transaction.js';

export interface Monitor extends MonitorSettings {
  id: string;
  account_id: string;
  created_on: string;
  modified_on: string;
}

/** A read of one monitor whose stored settings cannot be decoded (see header). */
export class CorruptMonitorError extends Error {
  constructor(
    readonly monitorId: string,
    reason: string,
  ) {
    super(`monitor ${monitorId}: stored settings cannot be read (${reason})`);
    this.name = 'CorruptMonitorError';
  }
}

/** Told about each monitor row that cannot be decoded; the row is skipped. */
export type OnCorruptMonitor = (corrupt: { monitor_id: string; reason: string }) => void;

/** The types of what `createMonitor`/`saveMonitor` write (values were validated on the way in). */
const storedShape = z.object({
  type: z.enum(MONITOR_TYPES).optional(),
  method: z.string().optional(),
  path: z.string().optional(),
  header: z.record(z.string(), z.array(z.string())).optional(),
  port: z.number().optional(),
  timeout: z.number().optional(),
  retries: z.number().optional(),
  interval: z.number().optional(),
  expected_codes: z.string().optional(),
  expected_body: z.string().optional(),
  follow_redirects: z.boolean().optional(),
  allow_insecure: z.boolean().optional(),
  consecutive_up: z.number().optional(),
  consecutive_down: z.number().optional(),
  description: z.string().optional(),
  max_block_lag: z.number().optional(),
});

const HEADER_SECRETS = { header: 'headers' } as const;

/** A monitor's secrets: the values of its secret headers. */
const MONITOR_SECRETS: SettingsSecrets = {
  split(settings) {
    const { clear, secrets } = splitSecrets(settings, HEADER_SECRETS);
    return { clear, parts: secrets };
  },
  join(clear, parts) {
    if (!isJsonObject(parts)) throw new SealedValueError('the sealed monitor secrets are not an object');
    return joinSecrets(clear, parts, HEADER_SECRETS);
  },
};

function storedSettings(id: string, settings: MonitorSettings, sealer: Sealer): string {
  return JSON.stringify(sealSettings({ ...settings }, MONITOR_SECRETS, sealer, settingsContext('monitors', id)));
}

function decodeRow(row: MonitorsTable, opener: Opener): { monitor: Monitor } | { reason: string } {
  let json: unknown;
  try {
    json = openSettings(JSON.parse(row.settings), MONITOR_SECRETS, opener, settingsContext('monitors', row.id));
  } catch (err) {
    if (err instanceof SealedValueError) return { reason: err.message };
    if (err instanceof SyntaxError) return { reason: 'not JSON' };
    throw err;
  }
  const parsed = storedShape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { reason: `${issue?.path.join('.') || 'settings'}: ${issue?.message ?? 'invalid'}` };
  }
  const defined = Object.fromEntries(Object.entries(parsed.data).filter(([, value]) => value !== undefined));
  return {
    monitor: {
      ...withMonitorDefaults(defined),
      id: row.id,
      account_id: row.account_id,
      created_on: row.created_on,
      modified_on: row.modified_on,
    },
  };
}

function toMonitor(row: MonitorsTable, opener: Opener): Monitor {
  const decoded = decodeRow(row, opener);
  if ('monitor' in decoded) return decoded.monitor;
  throw new CorruptMonitorError(row.id, decoded.reason);
}

function toMonitors(
  rows: readonly MonitorsTable[],
  opener: Opener,
  onCorrupt: OnCorruptMonitor | undefined,
): Monitor[] {
  const monitors: Monitor[] = [];
  for (const row of rows) {
    const decoded = decodeRow(row, opener);
    if ('monitor' in decoded) monitors.push(decoded.monitor);
    else onCorrupt?.({ monitor_id: row.id, reason: decoded.reason });
  }
  return monitors;
}

export async function getMonitor(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  id: string,
): Promise<Monitor | undefined> {
  const row = await getMonitorRow(db, accountId, id);
  return row === undefined ? undefined : toMonitor(row, secrets);
}

/** The stored row, not decoded (the health checker decodes a row only when its settings changed). */
export async function getMonitorRow(
  db: Kysely<Database>,
  accountId: string,
  id: string,
): Promise<MonitorsTable | undefined> {
  return (await selectMonitor.run(db, { account_id: accountId, id })).rows[0];
}

// Read at the start of every health round: built and compiled once.
const selectMonitor = new ReusableQuery(['account_id', 'id'], (db, v) =>
  db
    .selectFrom('monitors')
    .selectAll()
    .where('account_id', '=', v.account_id as string)
    .where('id', '=', v.id as string),
);

/** Decodes a row read by `getMonitorRow`; throws `CorruptMonitorError` as `getMonitor` does. */
export function monitorFromRow(row: MonitorsTable, secrets: Opener): Monitor {
  return toMonitor(row, secrets);
}

export async function listMonitors(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  window: PageWindow,
  onCorrupt?: OnCorruptMonitor,
): Promise<{ monitors: Monitor[]; total: number }> {
  const rows = await db
    .selectFrom('monitors')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_on')
    .orderBy('id')
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  const count = await db
    .selectFrom('monitors')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { monitors: toMonitors(rows, secrets, onCorrupt), total: Number(count.n) };
}

export async function createMonitor(
  db: Kysely<Database>,
  secrets: StoreSecrets,
  clock: Clock,
  accountId: string,
  settings: MonitorSettings,
): Promise<Monitor> {
  return inTransaction(db, async (trx) => {
    const sealer = await secrets.sealer(trx);
    const now = timestamp(clock);
    const id = newId();
    const row: MonitorsTable = {
      id,
      account_id: accountId,
      settings: storedSettings(id, settings, sealer),
      created_on: now,
      modified_on: now,
    };
    await trx.insertInto('monitors').values(row).execute();
    return toMonitor(row, secrets);
  });
}

/** Replaces every setting; undefined when the monitor does not exist in this account. */
export async function saveMonitor(
  db: Kysely<Database>,
  secrets: StoreSecrets,
  clock: Clock,
  accountId: string,
  id: string,
  settings: MonitorSettings,
): Promise<Monitor | undefined> {
  return inTransaction(db, async (trx) => {
    const sealer = await secrets.sealer(trx);
    const result = await trx
      .updateTable('monitors')
      .set({ settings: storedSettings(id, settings, sealer), modified_on: timestamp(clock) })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return getMonitor(trx, secrets, accountId, id);
  });
}

/** Seals every monitor row holding a secret in the clear or under another key than `sealer`'s. */
export function resealMonitors(db: Kysely<Database>, opener: Opener, sealer: Sealer): Promise<number> {
  return resealSettings(db, 'monitors', MONITOR_SECRETS, opener, sealer);
}

/** Pools (id, name) of the account that use this monitor, by name. */
export async function poolsUsingMonitor(
  db: Kysely<Database>,
  accountId: string,
  monitorId: string,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('pools')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('monitor_id', '=', monitorId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/**
 * Deletes the monitor unless a pool uses it (then 400 naming the pools). Returns false when it does
 * not exist in this account.
 */
export async function deleteMonitor(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const users = await poolsUsingMonitor(trx, accountId, id);
    if (users.length > 0) {
      const names = users.map((pool) => `"${pool.name}"`).join(', ');
      throw new SwitchyardError(
        'API_IN_USE',
        `monitor ${id} is used by pool ${names}; remove it from ${users.length > 1 ? 'those pools' : 'that pool'} first`,
        { details: { pools: users } },
      );
    }
    const result = await trx
      .deleteFrom('monitors')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}
