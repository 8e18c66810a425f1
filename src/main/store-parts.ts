/**
 * Start-up steps over the store (main.ts calls them in this order): open it and its secrets, start the
 * offline devnet,
 * seed the config's pools, then the store-backed parts the gateway reads — the pool directory, gateway
 * keys with their usage and quotas, per-origin statistics — and the clock-offset check.
 */

import { seedDevnetAlertPolicy } from '../devnet/alert-policy.js';
import { type Devnet, startDevnet } from '../devnet/devnet.js';
import { OriginStats } from '../gateway/origin-stats.js';
import { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import { StoreKeyDirectory } from '../keys/store-key-directory.js';
import { UsageRecorder } from '../keys/usage-recorder.js';
import { LocalQuotaBackend } from '../limits/local-backend.js';
import { poolsFromFile } from '../pools/from-file.js';
import { StorePoolDirectory } from '../pools/store-directory.js';
import { openSecrets } from '../secrets/open.js';
import { StatsRecorder } from '../stats/recorder.js';
import { ClockOffsetCheck } from '../store/clock-offset.js';
import { openStore as open, type Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import type { StartUp } from './start-up.js';

export async function openStore(s: StartUp): Promise<Store> {
  const store = await open({ data_dir: s.config.data_dir, database_url: s.config.database_url });
  s.onStop(() => store.close());
  return store;
}

/**
 * Secrets at rest (SPEC §16): the key is checked against the store and older rows sealed, before anything
 * reads a pool, monitor or webhook destination (secrets/open.ts).
 */
export async function openStoreSecrets(s: StartUp, store: Store): Promise<StoreSecrets> {
  return openSecrets({ store, config: s.config, env: s.options.env, clock: s.clock, logger: s.part('secrets') });
}

/** The anvil devnet when `devnet.enabled` (the offline default), else undefined. */
export async function startDevnetIfEnabled(s: StartUp): Promise<Devnet | undefined> {
  if (!s.config.devnet?.enabled) return undefined;
  const devnet = await startDevnet(s.config.devnet, s.part('devnet'), () => s.clock.now());
  s.onStop(() => devnet.stop());
  return devnet;
}

/**
 * Pools for routing: the config's pools seeded or applied by `pools_from_file` (and the devnet pool) in
 * `account_id`, the config's warnings logged; the gateway reads the store's snapshot. With the devnet, the
 * offline demo's alert too: a policy emailing `devnet.alert_email` (into data_dir/outbox/ without smtp_url).
 */
export async function seedPools(
  s: StartUp,
  store: Store,
  secrets: StoreSecrets,
  devnet: Devnet | undefined,
): Promise<void> {
  const { config, clock } = s;
  await poolsFromFile({ store, secrets, clock, logger: s.part('store'), config, devnetPool: devnet?.pool });
  if (devnet === undefined || config.devnet === undefined) return;
  await seedDevnetAlertPolicy({
    store,
    clock,
    logger: s.part('devnet'),
    accountId: config.account_id,
    email: config.devnet.alert_email,
    pool: devnet.pool.name,
  });
}

/** The routing account's pools as the gateway and monitors see them (the store's, kept fresh). */
export async function startPoolDirectory(s: StartUp, store: Store, secrets: StoreSecrets): Promise<StorePoolDirectory> {
  const directory = await StorePoolDirectory.start({
    store,
    secrets,
    accountId: s.config.account_id,
    logger: s.part('pools'),
    metrics: s.metrics,
  });
  s.onStop(() => directory.close());
  return directory;
}

export interface GatewayKeys {
  /** The routing account's keys, polled every 250 ms (a revoke anywhere is refused here within 1 s). */
  readonly table: StoreKeyDirectory;
  /** This process's count of each key's daily use, seeded and corrected from the store's totals. */
  readonly quota: LocalQuotaCounter;
  /** With workers (and no Redis): their quota reserves, answered here from the same totals. */
  readonly workerQuotas: LocalQuotaBackend | undefined;
  /** Usage flushed to the store every second and on stop (after the gateway closed, before the store). */
  readonly usage: UsageRecorder;
}

/** Gateway keys (SPEC §11), their usage and this process's quota counts. */
export async function startGatewayKeys(s: StartUp, store: Store): Promise<GatewayKeys> {
  const table = await StoreKeyDirectory.start({
    store,
    accountId: s.config.account_id,
    logger: s.part('keys'),
    metrics: s.metrics,
  });
  s.onStop(() => table.close());
  const quota = new LocalQuotaCounter();
  const workerQuotas = s.config.gateway.workers > 1 ? new LocalQuotaBackend(quota) : undefined;
  const usage = await UsageRecorder.start({
    store,
    clock: s.clock,
    logger: s.part('keys'),
    observeTotals: (date, totals) => quota.observe(date, totals),
  });
  s.onStop(() => usage.stop());
  return { table, quota, workerQuotas, usage };
}

/**
 * Per-origin statistics for the console (SPEC §13): the gateway (and the workers' reports) count in
 * memory; flushed to the store every 5 s with additive upserts, and on stop.
 */
export function startOriginStats(s: StartUp, store: Store): OriginStats {
  const stats = new OriginStats(s.clock);
  const recorder = new StatsRecorder({ store, clock: s.clock, logger: s.part('stats'), stats });
  s.onStop(() => recorder.stop());
  return stats;
}

/**
 * Instances compare times each took from its own clock: on PostgreSQL, this one's is checked against
 * the store's at start and every minute (a warning beyond 1 s).
 */
export async function startClockOffsetCheck(s: StartUp, store: Store): Promise<void> {
  const check = new ClockOffsetCheck({ store, clock: s.clock, logger: s.part('store'), metrics: s.metrics });
  await check.start();
  s.onStop(() => check.stop());
}
