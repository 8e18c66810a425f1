/**
 * `switchyard secrets rotate`: every secret in the store re-sealed under a new key, atomically.
 *
 * 1. The secrets are opened as `serve` opens them (open.ts: the current key is checked, anything in the
 *    clear is sealed).
 * 2. The new key: 32 random bytes, written to `<key file>.new` (0600, synced) — or, when the key comes
 *    from `SWITCHYARD_SECRETS_KEY`, the one in `SWITCHYARD_SECRETS_KEY_NEW` (no file is written).
 * 3. One transaction replaces the store's key record (first: on PostgreSQL that waits for sealing writes
 *    in flight and holds back new ones) and re-seals every row. A failure changes nothing.
 * 4. `<key file>.new` is renamed over the key file: the old key is gone. A crash between 3 and 4 is
 *    finished by the next start (open.ts).
 *
 * Running `serve` processes keep working: what they decoded is unchanged (re-sealing bumps no version),
 * and one that meets a value sealed with the new key re-reads its key file and takes the new key. One
 * whose key comes from the environment cannot: it serves what it has and refuses to read or write other
 * secrets (SECRETS_KEY_STALE) until it is restarted with the new key (docs/operations.md).
 */
import type { Clock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import { timestamp } from '../store/ids.js';
import { generateKey, SecretBox } from '../store/secret-box.js';
import { keyRecordFor, replaceKeyRecord } from '../store/store-secrets.js';
import { inTransaction } from '../store/transaction.js';
import {
  describeSource,
  type KeyFileConfig,
  keyFromEnv,
  keySource,
  NEW_SECRETS_KEY_ENV,
  pendingKeyFile,
  replaceKeyFile,
  SECRETS_KEY_ENV,
  writeKeyFile,
} from './key-source.js';
import { openSecrets } from './open.js';
import { type ResealCount, resealStore, scrubFreedPages } from './reseal.js';

export interface RotateOptions {
  store: Store;
  config: KeyFileConfig;
  env?: NodeJS.ProcessEnv | undefined;
  clock: Clock;
  logger: Logger;
}

export interface Rotation {
  from: string;
  to: string;
  resealed: ResealCount;
  /** Where the new key is: the key file, or the variable it was read from. */
  keyAt: string;
}

export async function rotateSecrets(options: RotateOptions): Promise<Rotation> {
  const env = options.env ?? process.env;
  const current = await openSecrets(options);
  const source = keySource(options.config, env);
  const nextKey = source.kind === 'env' ? newKeyFromEnv(env) : generateKey();
  const next = new SecretBox(nextKey);
  if (next.keyId === current.keyId) {
    throw new SwitchyardError('CONFIG_SECRETS_KEY', `${NEW_SECRETS_KEY_ENV} holds the current key; give it a new one`);
  }
  const from = current.keyId;
  if (source.kind === 'file') writeKeyFile(pendingKeyFile(source.path), nextKey, false);
  const resealed = await inTransaction(options.store.db, async (trx) => {
    await replaceKeyRecord(trx, keyRecordFor(next, timestamp(options.clock)));
    return resealStore(trx, current, next);
  });
  if (source.kind === 'file') replaceKeyFile(pendingKeyFile(source.path), source.path);
  await scrubFreedPages(options.store, options.logger);
  return {
    from,
    to: next.keyId,
    resealed,
    keyAt: source.kind === 'file' ? describeSource(source) : NEW_SECRETS_KEY_ENV,
  };
}

function newKeyFromEnv(env: NodeJS.ProcessEnv): Buffer {
  const key = keyFromEnv(env, NEW_SECRETS_KEY_ENV);
  if (key === undefined) {
    throw new SwitchyardError(
      'CONFIG_SECRETS_KEY',
      `the key comes from ${SECRETS_KEY_ENV}, so the new one must too: set ${NEW_SECRETS_KEY_ENV} ` +
        '(make one with: openssl rand -hex 32)',
    );
  }
  return key;
}
