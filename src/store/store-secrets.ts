/**
 * The store's secrets key as the rest of the code sees it: what every row codec that holds a secret
 * (pools' origins, monitors' headers, webhook destinations) opens and seals with, and the record of which
 * key the store's secrets are sealed with.
 *
 * The record is the one row of `secrets_key` (migration 010): the key id and a check value sealed with
 * that key. Opening the store's secrets at start (secrets/open.ts) compares the key it was given with
 * it; `switchyard secrets rotate` changes it in the same transaction that re-seals every value.
 *
 * After a rotation by another process, this process still holds the old key. When it meets a value
 * sealed with another key, or is about to seal while the record names another key, it re-reads its key
 * source once (`reload`: the key file; the environment cannot change under a running process) and takes
 * the key found there if it is the store's. Otherwise the read or write fails with `SECRETS_KEY_STALE`
 * (HTTP 503) naming both key ids — never an empty secret, never a value sealed with a key the store no
 * longer uses.
 *
 * Writes call `sealer(trx)` inside their transaction before anything else: on PostgreSQL it reads the
 * record `FOR SHARE`, so a rotation (which updates the record first) waits for writes in flight and
 * writes started after it see the new key; writers do not block one another. SQLite has one writer at a
 * time anyway.
 */
import { SwitchyardError } from '../errors/base.js';
import type { Db, Dialect } from './database.js';
import { KeyMismatchError, keyIdOf, SealedValueError, SecretBox } from './secret-box.js';

/** What seals values for a write: the key it seals with, and the sealing. */
export interface Sealer {
  readonly keyId: string;
  seal(plain: string, context: string): string;
}

/** What opens sealed values. */
export interface Opener {
  open(value: string, context: string): string;
}

/** `value` as JSON, sealed for the row `context` names. */
export function sealJson(sealer: Sealer, value: unknown, context: string): string {
  return sealer.seal(JSON.stringify(value), context);
}

/** A value sealed by `sealJson`, parsed; SealedValueError when it does not open or is not JSON. */
export function openJson(opener: Opener, value: string, context: string): unknown {
  const text = opener.open(value, context);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SealedValueError('a sealed value is not JSON', { cause: err });
  }
}

/** The row of `secrets_key`. */
export interface KeyRecord {
  key_id: string;
  check_value: string;
  modified_on: string;
}

const RECORD_ID = 'current';
const CHECK_CONTEXT = 'secrets_key/check';
const CHECK_TEXT = 'switchyard secrets key check';

export function keyRecordFor(box: SecretBox, now: string): KeyRecord {
  return { key_id: box.keyId, check_value: box.seal(CHECK_TEXT, CHECK_CONTEXT), modified_on: now };
}

/** True when `box` holds the key the record names (its check value opens to the known text). */
export function recordMatches(record: KeyRecord, box: SecretBox): boolean {
  if (record.key_id !== box.keyId) return false;
  try {
    return box.open(record.check_value, CHECK_CONTEXT) === CHECK_TEXT;
  } catch {
    return false;
  }
}

export async function readKeyRecord(db: Db, lock?: Dialect): Promise<KeyRecord | undefined> {
  return db
    .selectFrom('secrets_key')
    .select(['key_id', 'check_value', 'modified_on'])
    .where('id', '=', RECORD_ID)
    .$if(lock === 'postgres', (query) => query.forShare())
    .executeTakeFirst();
}

/** Records the key of a store that had none; false when another process recorded one first. */
export async function insertKeyRecord(db: Db, record: KeyRecord): Promise<boolean> {
  const result = await db
    .insertInto('secrets_key')
    .values({ id: RECORD_ID, ...record })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Replaces the record (rotation); on PostgreSQL this takes the row lock every sealing write shares. */
export async function replaceKeyRecord(db: Db, record: KeyRecord): Promise<void> {
  await db.updateTable('secrets_key').set(record).where('id', '=', RECORD_ID).execute();
}

export interface StoreSecretsOptions {
  box: SecretBox;
  dialect: Dialect;
  /** Where the key came from, for messages: "the key file /…/secrets.key" or "SWITCHYARD_SECRETS_KEY". */
  source: string;
  /** Reads the key source again (the key file); undefined when it cannot change (the environment). */
  reload?: (() => Buffer | undefined) | undefined;
}

/** Opens and seals the store's secrets with the store's key (see the header). */
export class StoreSecrets implements Opener {
  #box: SecretBox;
  readonly #options: StoreSecretsOptions;

  constructor(options: StoreSecretsOptions) {
    this.#box = options.box;
    this.#options = options;
  }

  get keyId(): string {
    return this.#box.keyId;
  }

  open(value: string, context: string): string {
    try {
      return this.#box.open(value, context);
    } catch (err) {
      if (!(err instanceof KeyMismatchError)) throw err;
      return this.#adopt(err.sealedWith).open(value, context);
    }
  }

  /** The sealer for a write in `trx`, after checking that this process holds the store's current key. */
  async sealer(trx: Db): Promise<Sealer> {
    const record = await readKeyRecord(trx, this.#options.dialect);
    if (record === undefined) {
      throw new SwitchyardError(
        'SECRETS_KEY_STALE',
        'the store has no secrets key recorded (restored from before secrets were sealed?); restart this process',
      );
    }
    return record.key_id === this.#box.keyId ? this.#box : this.#adopt(record.key_id);
  }

  /** Takes the key with id `wanted` from the key source, or throws SECRETS_KEY_STALE. */
  #adopt(wanted: string): SecretBox {
    const key = this.#options.reload?.();
    if (key !== undefined && keyIdOf(key) === wanted) {
      this.#box = new SecretBox(key);
      return this.#box;
    }
    throw new SwitchyardError(
      'SECRETS_KEY_STALE',
      `the store's secrets are sealed with key ${wanted}, but this process holds key ${this.#box.keyId} ` +
        `(from ${this.#options.source}); they were re-encrypted by \`switchyard secrets rotate\`: ` +
        'give this process the new key and restart it',
    );
  }
}
