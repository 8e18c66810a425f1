/**
 * What differs between the pools the config file declares (`pools:`) and the routing account's pools in
 * the store, field by field (`switchyard config diff`, `config apply`, and serve's warning under
 * `pools_from_file: seed`). Compared: what a file can say of a pool — description, enabled,
 * minimum_origins, notification_email, notification_filter, origin_steering, the origins (by name: each
 * field, and their order) and the inline monitor (each setting, against the pool's monitor in the store;
 * a pool without `monitor:` in the file is to have none). What the file cannot say (check_regions,
 * latitude, longitude, load_shedding, disabled_at) is left out and kept by `apply`.
 * The store's side is read with its secrets opened (`secrets`: the key serve uses), so values are
 * compared in full; they are shown masked (model/origin-address.ts, model/header-secrets.ts), and a
 * secret that differs only inside its mask is still a difference, said so.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import type { PoolConfig } from '../config/schema.js';
import { getMonitor, type Monitor } from '../health/monitor-queries.js';
import { maskHeaders } from '../model/header-secrets.js';
import { MONITOR_DEFAULTS, type MonitorSettings } from '../model/monitor-schema.js';
import { maskAddress } from '../model/origin-address.js';
import type { Origin, Pool } from '../model/pool.js';
import { poolFieldsFromConfig } from '../model/pool-defaults.js';
import type { Database } from '../store/schema.js';
import type { Opener } from '../store/store-secrets.js';
import { DECLARED_FIELDS, declaredMonitor } from './declared.js';
import { findPoolByName, poolFields } from './pool-queries.js';

/** One field that differs: `store` is what the store holds, `file` what the file says (both shown masked). */
export interface FieldChange {
  field: string;
  store: string;
  file: string;
}

export type PoolDifference =
  | { kind: 'create'; pool: PoolConfig }
  | { kind: 'update'; pool: PoolConfig; current: Pool; monitor: Monitor | undefined; changes: FieldChange[] }
  | { kind: 'same'; pool: PoolConfig; current: Pool };

const ORIGIN_FIELDS = ['address', 'enabled', 'weight', 'header', 'archive', 'ws_address'] as const;

/** Each declared pool against the store's pool of the same name in `accountId`. */
export async function diffPools(
  db: Kysely<Database>,
  secrets: Opener,
  accountId: string,
  pools: readonly PoolConfig[],
): Promise<PoolDifference[]> {
  const out: PoolDifference[] = [];
  for (const pool of pools) {
    const current = await findPoolByName(db, secrets, accountId, pool.name);
    if (current === undefined) {
      out.push({ kind: 'create', pool });
      continue;
    }
    const monitor = current.monitor === null ? undefined : await getMonitor(db, secrets, accountId, current.monitor);
    const changes = poolChanges(pool, current, monitor);
    out.push(
      changes.length === 0 ? { kind: 'same', pool, current } : { kind: 'update', pool, current, monitor, changes },
    );
  }
  return out;
}

/** The fields of `current` (and its monitor) that differ from what the file declares. */
export function poolChanges(pool: PoolConfig, current: Pool, monitor: Monitor | undefined): FieldChange[] {
  const file = poolFieldsFromConfig(pool, current.monitor);
  const stored = poolFields(current);
  const changes: FieldChange[] = [];
  for (const field of DECLARED_FIELDS) compare(changes, field, stored[field], file[field], shown);
  originChanges(changes, stored.origins, file.origins);
  monitorChanges(changes, monitor, declaredMonitor(pool));
  return changes;
}

function originChanges(changes: FieldChange[], stored: readonly Origin[], file: readonly Origin[]): void {
  const before = new Map(stored.map((origin) => [origin.name, origin]));
  const after = new Map(file.map((origin) => [origin.name, origin]));
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name);
    const b = after.get(name);
    if (a === undefined || b === undefined) {
      compare(changes, `origins.${name}`, a && originShown(a), b && originShown(b), (value) => JSON.stringify(value));
      continue;
    }
    for (const field of ORIGIN_FIELDS) {
      const show =
        field === 'address' || field === 'ws_address' ? shownAddress : field === 'header' ? shownHeaders : shown;
      compare(changes, `origins.${name}.${field}`, a[field] ?? defaultOf(field), b[field] ?? defaultOf(field), show);
    }
  }
  const common = (origins: readonly Origin[], other: Map<string, Origin>) =>
    origins.filter((origin) => other.has(origin.name)).map((origin) => origin.name);
  compare(changes, 'origins (order)', common(stored, after), common(file, before), shown);
}

function monitorChanges(changes: FieldChange[], stored: Monitor | undefined, file: MonitorSettings | undefined): void {
  if (stored === undefined || file === undefined) {
    compare(changes, 'monitor', stored && monitorShown(stored), file && monitorShown(file), (value) =>
      JSON.stringify(value),
    );
    return;
  }
  for (const field of Object.keys(MONITOR_DEFAULTS) as (keyof MonitorSettings)[]) {
    compare(changes, `monitor.${field}`, stored[field], file[field], field === 'header' ? shownHeaders : shown);
  }
}

/** Adds a change when the values differ; `show` masks them for display. */
function compare<T>(changes: FieldChange[], field: string, store: T, file: T, show: (value: T) => string): void {
  if (isDeepStrictEqual(store, file)) return;
  const a = store === undefined ? '(none)' : show(store);
  const b = file === undefined ? '(none)' : show(file);
  changes.push({ field, store: a, file: a === b ? `${b} (a masked part differs)` : b });
}

function defaultOf(field: (typeof ORIGIN_FIELDS)[number]): unknown {
  return field === 'archive' ? false : undefined;
}

const shown = (value: unknown): string => JSON.stringify(value);
const shownAddress = (value: unknown): string => JSON.stringify(maskAddress(String(value)));
const shownHeaders = (value: unknown): string => JSON.stringify(maskHeaders(value as Record<string, string[]>));

function originShown(origin: Origin): Record<string, unknown> {
  const { disabled_at: _disabled, ...rest } = origin;
  return {
    ...rest,
    address: maskAddress(origin.address),
    header: maskHeaders(origin.header),
    ...(origin.ws_address === undefined ? {} : { ws_address: maskAddress(origin.ws_address) }),
  };
}

function monitorShown(monitor: MonitorSettings): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const field of Object.keys(MONITOR_DEFAULTS) as (keyof MonitorSettings)[]) settings[field] = monitor[field];
  return { ...settings, header: maskHeaders(monitor.header) };
}
