import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';

/**
 * Opens the store: the embedded SQLite file `<data_dir>/switchyard.db` by default, or PostgreSQL when
 * `database_url` is set (scale-out mode: several `serve` processes share one database). Migrations run
 * on open. Both backends go through the same Kysely query layer, so every query is written once.
 *
 * SQLite runs in WAL mode with a 5 s busy timeout, so `switchyard token create` works while `serve` runs.
 */
export type Dialect = 'sqlite' | 'postgres';

/** The query handle every feature's queries take: the store's connection or a transaction on it. */
export type Db = Kysely<Database>;

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  data_dir: string;
  database_url?: string | undefined;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  let store: Store;
  if (options.database_url !== undefined) {
    const pool = new pg.Pool({ connectionString: options.database_url, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    store = { db, dialect: 'postgres', close: () => db.destroy() };
  } else {
    mkdirSync(options.data_dir, { recursive: true });
    const sqlite = new SQLite(join(options.data_dir, 'switchyard.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    store = { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  try {
    await migrateToLatest(store);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
