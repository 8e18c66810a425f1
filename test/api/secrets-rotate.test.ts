/**
 * `secrets rotate` beyond the key file's happy path (secrets/rotate.ts, secrets/open.ts), on the
 * backend of the run:
 * - with the key in SWITCHYARD_SECRETS_KEY the new key comes from SWITCHYARD_SECRETS_KEY_NEW (required);
 *   afterwards only the new key opens the store;
 * - a process that still holds the old key from the environment cannot re-read it: reading a re-sealed
 *   pool and writing one are SECRETS_KEY_STALE (503) naming both key ids — never an empty secret;
 * - a rotation interrupted after its commit, before the key file's rename, is finished by the next start.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureAccount } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { isSwitchyardError } from '../../src/errors/base.js';
import { silentLogger } from '../../src/log.js';
import { poolFieldsFromConfig } from '../../src/model/pool-defaults.js';
import { createPool, getPool } from '../../src/pools/pool-queries.js';
import { openSecrets } from '../../src/secrets/open.js';
import { rotateSecrets } from '../../src/secrets/rotate.js';
import { openStore, type Store } from '../../src/store/database.js';
import { formatKey, generateKey, keyIdOf } from '../../src/store/secret-box.js';
import { storeOptions, type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

const ACCOUNT = 'feedfacefeedfacefeedfacefeedface';
const ADDRESS = 'https://user:rot-Pa55@rpc.example/v3/0123456789abcdef0123456789abcdef';

function hexKey(): string {
  return formatKey(generateKey()).trim();
}

async function refusedWith(code: string, work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (err) {
    assert.ok(isSwitchyardError(err) && err.code === code, String(err));
    return err.message;
  }
  return assert.fail(`expected ${code}`);
}

describe('secrets rotate: keys from the environment, stale processes, interrupted rotations', () => {
  let location: TestStoreLocation;
  let store: Store;
  // The first test rotates from `first` to `second`; the second test starts from `second`.
  const first = hexKey();
  const second = hexKey();
  const open = (env: NodeJS.ProcessEnv) =>
    openSecrets({ store, config: { data_dir: location.data_dir }, env, clock: systemClock, logger: silentLogger });
  const rotate = (env: NodeJS.ProcessEnv) =>
    rotateSecrets({ store, config: { data_dir: location.data_dir }, env, clock: systemClock, logger: silentLogger });

  before(async () => {
    location = await testStoreLocation();
    store = await openStore(storeOptions(location));
    await ensureAccount(store.db, systemClock, ACCOUNT, 'rotate');
  });
  after(async () => {
    await store?.close();
    location?.cleanup();
  });

  it('with SWITCHYARD_SECRETS_KEY, the new key comes from SWITCHYARD_SECRETS_KEY_NEW; a stale process refuses', async () => {
    const stale = await open({ SWITCHYARD_SECRETS_KEY: first });
    assert.equal(existsSync(join(location.data_dir, 'secrets.key')), false, 'no key file with the variable');
    const fields = poolFieldsFromConfig({ name: 'env-keyed', origins: [{ name: 'o', address: ADDRESS }] }, null);
    const pool = await createPool(store.db, stale, systemClock, ACCOUNT, fields);

    const missing = await refusedWith('CONFIG_SECRETS_KEY', () => rotate({ SWITCHYARD_SECRETS_KEY: first }));
    assert.match(missing, /set SWITCHYARD_SECRETS_KEY_NEW/);
    const rotation = await rotate({ SWITCHYARD_SECRETS_KEY: first, SWITCHYARD_SECRETS_KEY_NEW: second });
    assert.deepEqual(
      { from: rotation.from, to: rotation.to, keyAt: rotation.keyAt, pools: rotation.resealed.pools },
      {
        from: keyIdOf(Buffer.from(first, 'hex')),
        to: keyIdOf(Buffer.from(second, 'hex')),
        keyAt: 'SWITCHYARD_SECRETS_KEY_NEW',
        pools: 1,
      },
    );

    // The process that opened the store with the first key cannot re-read the environment.
    const read = await refusedWith('SECRETS_KEY_STALE', () => getPool(store.db, stale, ACCOUNT, pool.id));
    assert.ok(read.includes(rotation.from) && read.includes(rotation.to), read);
    const other = poolFieldsFromConfig({ name: 'written-late', origins: [{ name: 'o', address: ADDRESS }] }, null);
    await refusedWith('SECRETS_KEY_STALE', () => createPool(store.db, stale, systemClock, ACCOUNT, other));
    assert.equal((await store.db.selectFrom('pools').select('id').execute()).length, 1, 'nothing written');

    await refusedWith('CONFIG_SECRETS_KEY', () => open({ SWITCHYARD_SECRETS_KEY: first }));
    const fresh = await open({ SWITCHYARD_SECRETS_KEY: second });
    assert.equal((await getPool(store.db, fresh, ACCOUNT, pool.id))?.origins[0]?.address, ADDRESS);
  });

  it('a rotation that committed but did not rename its key file is finished by the next start', async () => {
    const keyFile = join(location.data_dir, 'secrets.key');
    const current = hexKey();
    writeFileSync(keyFile, `${current}\n`, { mode: 0o600 });
    // The store is sealed with the key of the previous test; bring it to the key file's key first.
    await rotate({ SWITCHYARD_SECRETS_KEY: second, SWITCHYARD_SECRETS_KEY_NEW: current });
    const rotation = await rotate({});
    // As if the process died between the commit and the rename: the old key in place, the new one in .new.
    const newKey = readFileSync(keyFile, 'utf8');
    writeFileSync(`${keyFile}.new`, newKey, { mode: 0o600 });
    writeFileSync(keyFile, `${current}\n`, { mode: 0o600 });
    const secrets = await open({});
    assert.equal(secrets.keyId, rotation.to);
    assert.equal(readFileSync(keyFile, 'utf8'), newKey);
    assert.equal(existsSync(`${keyFile}.new`), false);
    renameSync(keyFile, `${keyFile}.gone`);
    const gone = await refusedWith('CONFIG_SECRETS_KEY', () => open({}));
    assert.ok(gone.includes(`${keyFile} does not exist`) && gone.includes(rotation.to), gone);
  });
});
