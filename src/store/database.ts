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
 * Kysely's SQLite driver prepares every query it runs; the connection keeps the last
 * `STATEMENT_CACHE_SIZE` (256) prepared statements by their SQL text and reuses them (the health monitors
 * run the same few statements thousands of times a second, and preparing was a tenth of their cost).
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

/** The embedded SQLite store's file in `data_dir`. */
export function embeddedStoreFile(dataDir: string): string {
  return join(dataDir, 'switchyard.db');
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  let store: Store;
  if (options.database_url !== undefined) {
    const pool = new pg.Pool({ connectionString: options.database_url, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    store = { db, dialect: 'postgres', close: () => db.destroy() };
  } else {
    mkdirSync(options.data_dir, { recursive: true });
    const sqlite = new SQLite(embeddedStoreFile(options.data_dir));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    reusePreparedStatements(sqlite);
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

/** Prepared statements kept per SQLite connection, least recently used dropped first. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Makes `prepare` return the statement already prepared for the same SQL text. A statement still being
 * iterated (a streamed select) is `busy` and cannot run twice at once, so a fresh one is prepared then.
 * Statements re-prepare themselves after a schema change (SQLite's prepare_v2), so reuse is safe across
 * migrations. Kysely sets no per-statement modes (raw, pluck, expand) that a later user would inherit.
 */
function reusePreparedStatements(sqlite: SQLite.Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, SQLite.Statement>();
  sqlite.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached !== undefined && !cached.busy) {
      // Re-insert: a Map iterates in insertion order, so the first key is the least recently used.
      cache.delete(source);
      cache.set(source, cached);
      return cached;
    }
    const statement = prepare(source);
    cache.delete(source);
    cache.set(source, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    return statement;
  }) as SQLite.Database['prepare'];
}
