import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Dialect, Store } from './database.js';
import { coreMigration } from './migrations/001_core.js';
import { healthMigration } from './migrations/002_health.js';
import { notificationsMigration } from './migrations/003_notifications.js';
import { tokenLifecycleMigration } from './migrations/004_token_lifecycle.js';
import { originAddressesMigration } from './migrations/005_origin_addresses.js';
import { gatewayKeysMigration } from './migrations/006_gateway_keys.js';
import { originStatsMigration } from './migrations/007_origin_stats.js';
import { chainIncidentsMigration } from './migrations/008_chain_incidents.js';
import { keyQuotaBigintMigration } from './migrations/009_key_quota_bigint.js';
import { secretsAtRestMigration } from './migrations/010_secrets_at_rest.js';
import { transactionLedgerMigration } from './migrations/011_transaction_ledger.js';

/**
 * The one list of migrations, in order. Each migration gets the dialect so the few statements that
 * differ (auto-increment keys) can; everything else is written once. Never edit a released migration:
 * add a new one.
 */
type DialectMigration = (dialect: Dialect) => Migration;

export const MIGRATIONS: Record<string, DialectMigration> = {
  '001_core': coreMigration,
  '002_health': healthMigration,
  '003_notifications': notificationsMigration,
  '004_token_lifecycle': tokenLifecycleMigration,
  '005_origin_addresses': originAddressesMigration,
  '006_gateway_keys': gatewayKeysMigration,
  '007_origin_stats': originStatsMigration,
  '008_chain_incidents': chainIncidentsMigration,
  '009_key_quota_bigint': keyQuotaBigintMigration,
  '010_secrets_at_rest': secretsAtRestMigration,
  '011_transaction_ledger': transactionLedgerMigration,
};

export async function migrateToLatest(store: Store): Promise<void> {
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(Object.entries(MIGRATIONS).map(([name, make]) => [name, make(store.dialect)])),
  };
  // Several processes may start at once against one PostgreSQL; Kysely's migrator takes a lock.
  const migrator = new Migrator({ db: store.db as Kysely<unknown>, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`database migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
