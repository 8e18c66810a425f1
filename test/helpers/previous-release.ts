/**
 * A store as the previous release left it: the schema of every migration before `010_secrets_at_rest`
 * (before secrets were sealed) and rows written the way that release wrote them — origin credentials,
 * secret headers, webhook URLs and secrets in the clear, `origin_health` keyed by the full address. The next start of the current version
 * migrates and seals it (test/api/secrets-upgrade.test.ts).
 */
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Dialect } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrate.js';
import type { TestStoreLocation } from './store.js';

/** The migrations the previous release had: every one before the one that brought secrets at rest. */
const SECRETS_MIGRATION = '010_secrets_at_rest';
const PREVIOUS = Object.entries(MIGRATIONS).slice(0, Object.keys(MIGRATIONS).indexOf(SECRETS_MIGRATION));

// biome-ignore lint/suspicious/noExplicitAny: the previous release's tables, written row by row as it did.
export type PreviousStore = Kysely<any>;

/** Opens the location's store with the previous release's schema; the caller writes rows and destroys it. */
export async function openPreviousReleaseStore(location: TestStoreLocation): Promise<PreviousStore> {
  const dialect: Dialect = location.database_url === undefined ? 'sqlite' : 'postgres';
  const db: PreviousStore =
    dialect === 'postgres'
      ? new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.database_url }) }) })
      : new Kysely({ dialect: new SqliteDialect({ database: previousSqlite(location.data_dir) }) });
  const migrator = new Migrator({
    db,
    provider: {
      getMigrations: async () => Object.fromEntries(PREVIOUS.map(([name, make]) => [name, make(dialect)])),
    },
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) throw error;
  return db;
}

function previousSqlite(dataDir: string): SQLite.Database {
  const sqlite = new SQLite(join(dataDir, 'switchyard.db'));
  sqlite.pragma('journal_mode = WAL');
  return sqlite;
}
