/**
 * Where store-backed tests keep their data. Without `SWITCHYARD_TEST_DATABASE_URL` a test gets a fresh
 * SQLite directory under the OS temp dir. With it (set by `scripts/run-tests.mjs` for the PostgreSQL
 * pass: an admin URL of a throwaway cluster), each call creates a fresh database in that cluster and
 * points `database_url` at it, so test files never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { openSecrets } from '../../src/secrets/open.js';
import { type OpenStoreOptions, openStore, type Store } from '../../src/store/database.js';
import type { StoreSecrets } from '../../src/store/store-secrets.js';

export interface TestStoreLocation {
  data_dir: string;
  database_url?: string;
  backend: 'sqlite' | 'postgres';
  /** Removes the temp dir (the PostgreSQL database dies with the throwaway cluster). */
  cleanup(): void;
}

export function testBackend(): 'sqlite' | 'postgres' {
  return process.env.SWITCHYARD_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
}

export async function testStoreLocation(): Promise<TestStoreLocation> {
  const data_dir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const cleanup = () => rmSync(data_dir, { recursive: true, force: true });
  const admin = process.env.SWITCHYARD_TEST_DATABASE_URL;
  if (!admin) return { data_dir, backend: 'sqlite', cleanup };
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { data_dir, database_url: url.toString(), backend: 'postgres', cleanup };
}

export function storeOptions(location: TestStoreLocation): OpenStoreOptions {
  return { data_dir: location.data_dir, database_url: location.database_url };
}

/**
 * The store's secrets as `serve` opens them (secrets/open.ts): the key file in `dataDir`, created on
 * first use; `SWITCHYARD_SECRETS_KEY` of this process is ignored.
 */
export function openTestSecrets(store: Store, dataDir: string): Promise<StoreSecrets> {
  return openSecrets({ store, config: { data_dir: dataDir }, env: {}, clock: systemClock, logger: silentLogger });
}

/** A migrated store in a fresh location with its secrets opened; `close()` also removes the temp dir. */
export async function openTestStore(): Promise<{
  store: Store;
  secrets: StoreSecrets;
  location: TestStoreLocation;
  close(): Promise<void>;
}> {
  const location = await testStoreLocation();
  const store = await openStore(storeOptions(location));
  const secrets = await openTestSecrets(store, location.data_dir);
  return {
    store,
    secrets,
    location,
    async close() {
      await store.close();
      location.cleanup();
    },
  };
}
