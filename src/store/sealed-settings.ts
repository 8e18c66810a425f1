/**
 * Secrets inside a JSON `settings` column (pools, monitors): the object is stored with its secret parts
 * replaced by their clear copy (store/sealed-fields.ts) and one `sealed` member holding those parts,
 * sealed for the row (`<table>/<id>`). A table says where its secrets are with a `SettingsSecrets`: how to
 * split settings into clear copy and parts, and how to join them again.
 *
 * Settings without `sealed` (written before secrets were sealed) read as they are. `resealSettings`
 * rewrites every row that holds a secret in the clear or sealed with another key: at the start that holds
 * the key, and by `switchyard secrets rotate` (secrets/reseal.ts). It leaves `version` and `modified_on`
 * alone: the row means the same, so what other processes decoded stays valid.
 */
import type { Db } from './database.js';
import { SealedValueError, sealedKeyId } from './secret-box.js';
import { type Opener, openJson, type Sealer, sealJson } from './store-secrets.js';

export type Json = Record<string, unknown>;

export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The context a row's sealed settings are bound to (store/secret-box.ts): `<table>/<id>`. */
export function settingsContext(table: 'pools' | 'monitors', id: string): string {
  return `${table}/${id}`;
}

/** Where a table's settings hold secrets. */
export interface SettingsSecrets {
  /** The clear copy and the secret parts (undefined: nothing secret). */
  split(settings: Json): { clear: Json; parts: unknown };
  /** The settings with opened parts put back; throws SealedValueError when they do not fit. */
  join(clear: Json, parts: unknown): Json;
}

/** Settings as stored (see the header). */
export function sealSettings<T extends Json>(settings: T, where: SettingsSecrets, sealer: Sealer, context: string): T {
  const { clear, parts } = where.split(settings);
  if (parts === undefined) return settings;
  return { ...clear, sealed: sealJson(sealer, parts, context) } as unknown as T;
}

/** Stored settings (parsed JSON) with the sealed parts put back and `sealed` dropped. */
export function openSettings(json: unknown, where: SettingsSecrets, opener: Opener, context: string): unknown {
  if (!isJsonObject(json) || json.sealed === undefined) return json;
  const { sealed, ...clear } = json;
  if (typeof sealed !== 'string') throw new SealedValueError('`sealed` is not a sealed value');
  return where.join(clear, openJson(opener, sealed, context));
}

/** True when stored settings need (re)sealing with the key `keyId`. */
function needsSealing(json: Json, where: SettingsSecrets, keyId: string): boolean {
  if (json.sealed !== undefined) return typeof json.sealed !== 'string' || sealedKeyId(json.sealed) !== keyId;
  return where.split(json).parts !== undefined;
}

/** Re-seals the `settings` of every row of `table` that needs it (see the header); how many were rewritten. */
export async function resealSettings(
  db: Db,
  table: 'pools' | 'monitors',
  where: SettingsSecrets,
  opener: Opener,
  sealer: Sealer,
): Promise<number> {
  const rows = await db.selectFrom(table).select(['id', 'settings']).execute();
  let changed = 0;
  for (const row of rows) {
    let json: unknown;
    try {
      json = JSON.parse(row.settings);
    } catch {
      continue; // not JSON: the row's reader reports it
    }
    if (!isJsonObject(json) || !needsSealing(json, where, sealer.keyId)) continue;
    const context = settingsContext(table, row.id);
    const plain = openSettings(json, where, opener, context) as Json;
    const settings = JSON.stringify(sealSettings(plain, where, sealer, context));
    await db.updateTable(table).set({ settings }).where('id', '=', row.id).execute();
    changed += 1;
  }
  return changed;
}
