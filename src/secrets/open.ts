/**
 * The start-up step that opens the store's secrets (SPEC §16), run by `serve` and `secrets rotate` after
 * the store's migrations and before anything reads a pool, monitor or webhook destination:
 *
 * 1. The key: `SWITCHYARD_SECRETS_KEY`, else the key file (key-source.ts). A store with no key recorded
 *    and no key file gets a new key file; a store with a key recorded and no key file is an error.
 * 2. The key must be the store's (its `secrets_key` record: key id and check value,
 *    store/store-secrets.ts); the first start records it. A different key is an error naming the file or
 *    variable and both key ids, before anything is changed: never a silent empty secret, never a second
 *    key. (A key file whose `.new` holds the store's key is a rotation interrupted before its rename:
 *    finished here.)
 * 3. Every secret still in the clear — rows an older version wrote — is sealed, in one transaction
 *    (reseal.ts); on SQLite the files are then rewritten so the old bytes are gone.
 *
 * Errors are CONFIG_SECRETS_KEY (exit 2). Store-only commands (`token`, `key`, `account`) do not open
 * the secrets: they need no key.
 */
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { generateKey, keyIdOf, SecretBox } from '../store/secret-box.js';
import {
  insertKeyRecord,
  type KeyRecord,
  keyRecordFor,
  readKeyRecord,
  recordMatches,
  StoreSecrets,
} from '../store/store-secrets.js';
import { inTransaction } from '../store/transaction.js';
import {
  describeSource,
  type KeyFileConfig,
  type KeySource,
  keySource,
  pendingKeyFile,
  readableByOthers,
  readKeyFile,
  replaceKeyFile,
  rereadKeyFile,
  writeKeyFile,
} from './key-source.js';
import { resealStore, scrubFreedPages, totalOf } from './reseal.js';

export interface OpenSecretsOptions {
  store: Store;
  config: KeyFileConfig;
  /** Where SWITCHYARD_SECRETS_KEY is read (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  clock: Clock;
  logger: Logger;
}

const LOST_KEY =
  'use the key that was backed up with this database (docs/operations.md, "Backup and restore"); without it the ' +
  'sealed secrets cannot be read';

export async function openSecrets(options: OpenSecretsOptions): Promise<StoreSecrets> {
  const { store, logger } = options;
  const source = keySource(options.config, options.env ?? process.env);
  const record = await readKeyRecord(store.db);
  const box = new SecretBox(keyOf(source, record, logger));
  await checkRecord(options, source, record, box);
  const secrets = new StoreSecrets({
    box,
    dialect: store.dialect,
    source: describeSource(source),
    reload: source.kind === 'file' ? () => rereadKeyFile(source.path) : undefined,
  });
  const sealed = await inTransaction(store.db, async (trx) => resealStore(trx, secrets, await secrets.sealer(trx)));
  if (totalOf(sealed) > 0) {
    await scrubFreedPages(store, logger);
    logger.info('sealed the secrets an older version stored in the clear', { ...sealed, key_id: box.keyId });
  }
  logger.info('secrets at rest: sealed with AES-256-GCM', { key_id: box.keyId, key: describeSource(source) });
  return secrets;
}

/** The key the source holds (see the header); creates the key file of a store that has no key yet. */
function keyOf(source: KeySource, record: KeyRecord | undefined, logger: Logger): Buffer {
  if (source.kind === 'env') return source.key;
  const key = readKeyFile(source.path);
  if (key !== undefined) {
    if (readableByOthers(source.path)) {
      logger.warn('the secrets key file may be read by other users; chmod 600 it', { file: source.path });
    }
    if (record === undefined || keyIdOf(key) === record.key_id) return key;
    return finishedRotation(source.path, record, logger) ?? key;
  }
  if (record !== undefined) {
    throw new SwitchyardError(
      'CONFIG_SECRETS_KEY',
      `the secrets key file ${source.path} does not exist, but this store's secrets are sealed with key ` +
        `${record.key_id}: put that key there, or set SWITCHYARD_SECRETS_KEY to it; ${LOST_KEY}`,
    );
  }
  const created = generateKey();
  try {
    writeKeyFile(source.path, created, true);
  } catch (err) {
    // Another process sharing the data directory created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return keyOf(source, record, logger);
    throw new SwitchyardError('CONFIG_SECRETS_KEY', `cannot create the secrets key file ${source.path}`, {
      cause: err,
    });
  }
  logger.info('created a new secrets key file: back it up, apart from the database', {
    file: source.path,
    key_id: keyIdOf(created),
  });
  return created;
}

/** The key of a rotation that re-sealed the store but did not rename `<file>.new` yet, after renaming it. */
function finishedRotation(path: string, record: KeyRecord, logger: Logger): Buffer | undefined {
  const pending = rereadKeyFile(pendingKeyFile(path));
  if (pending === undefined || keyIdOf(pending) !== record.key_id) return undefined;
  replaceKeyFile(pendingKeyFile(path), path);
  logger.warn('finished an interrupted `secrets rotate`: the key file now holds the new key', {
    file: path,
    key_id: record.key_id,
  });
  return pending;
}

/** Verifies the key against the store's record, or records it in a store that has none. */
async function checkRecord(
  options: OpenSecretsOptions,
  source: KeySource,
  record: KeyRecord | undefined,
  box: SecretBox,
): Promise<void> {
  let recorded = record;
  if (recorded === undefined) {
    if (await insertKeyRecord(options.store.db, keyRecordFor(box, timestamp(options.clock)))) return;
    recorded = await readKeyRecord(options.store.db); // another process recorded its key first
  }
  if (recorded !== undefined && recordMatches(recorded, box)) return;
  throw new SwitchyardError(
    'CONFIG_SECRETS_KEY',
    `${describeSource(source)} holds key ${box.keyId}, but this store's secrets are sealed with key ` +
      `${recorded?.key_id ?? '(none)'}: ${LOST_KEY}; with several instances, every one needs the same key`,
  );
}
