/**
 * Sealing every secret the store holds with one key, in the caller's transaction: pools (origins'
 * credentials, keyed paths and query values, secret headers), monitors (secret headers) and webhook
 * destinations (URL secrets and the secret). Each table's codec rewrites only rows that hold a secret in
 * the clear or sealed with another key, so a pass over a sealed store writes nothing.
 *
 * On SQLite the pages and WAL frames that held the old bytes (plain secrets of an older version, or
 * values sealed with a rotated key) stay in the files until SQLite reuses them; `scrubFreedPages`
 * rewrites the database (VACUUM) and empties the WAL (checkpoint TRUNCATE) after a pass that changed
 * rows. A PostgreSQL server keeps old row versions until its own VACUUM reuses them (docs/security.md).
 */
import { sql } from 'kysely';
import { resealMonitors } from '../health/monitor-queries.js';
import type { Logger } from '../log.js';
import { resealDestinations } from '../notifications/queries/destinations.js';
import { resealPools } from '../pools/pool-secrets.js';
import type { Db, Store } from '../store/database.js';
import type { Opener, Sealer } from '../store/store-secrets.js';

/** Rows rewritten, per table. */
export interface ResealCount {
  pools: number;
  monitors: number;
  webhook_destinations: number;
}

export function totalOf(count: ResealCount): number {
  return count.pools + count.monitors + count.webhook_destinations;
}

/** Seals with `sealer` every secret in the clear or sealed with another key, opening with `opener`. */
export async function resealStore(trx: Db, opener: Opener, sealer: Sealer): Promise<ResealCount> {
  return {
    pools: await resealPools(trx, opener, sealer),
    monitors: await resealMonitors(trx, opener, sealer),
    webhook_destinations: await resealDestinations(trx, opener, sealer),
  };
}

/**
 * Rewrites an SQLite store's files so no freed page or WAL frame keeps old bytes (see the header). Best
 * effort: the sealing is done and committed either way, so a store busy in other processes (`serve`
 * while `secrets rotate` runs) gets a warning, not a failure.
 */
export async function scrubFreedPages(store: Store, logger: Logger): Promise<void> {
  if (store.dialect !== 'sqlite') return;
  const left = 'old bytes may stay in switchyard.db and switchyard.db-wal until SQLite reuses their pages';
  try {
    await sql`vacuum`.execute(store.db);
    const result = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(store.db);
    if (Number(result.rows[0]?.busy ?? 0) !== 0) {
      logger.warn(`other processes kept the write-ahead log busy; ${left}`);
    }
  } catch (err) {
    logger.warn(`could not rewrite the database files; ${left}`, { err });
  }
}
