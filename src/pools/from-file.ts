/**
 * The pools of the config file at `serve` start-up (SPEC §1, §15), by `pools_from_file`:
 *   - `seed` (default): a declared pool is created when no pool of its name exists, never overwritten
 *     (seed.ts); then ONE `warn` line names the declared pools whose stored copy differs from the file
 *     and the command that shows how (`switchyard config diff`);
 *   - `apply`: the declared pools are applied (apply.ts: created or updated to match the file, with the
 *     API's rules); `applyFilePools` is the step a reload calls again.
 * Either way the account is created when missing, the devnet's generated pool is seeded with its
 * origins' current addresses, and the config's warnings (config/warnings.ts: a network naming a pool
 * that exists nowhere, a declared pool no network uses) are logged at `warn`, one line each.
 */
import type { Clock } from '../clock.js';
import { wholeParts } from '../config/parts.js';
import type { Config, PoolConfig } from '../config/schema.js';
import { configWarnings } from '../config/warnings.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import { type ApplyOutcome, applyDeclaredPools } from './apply.js';
import { diffPools } from './diff.js';
import { poolNamesOf } from './pool-queries.js';
import { seedFromConfig } from './seed.js';

export interface PoolsFromFileOptions {
  store: Store;
  /** Opens the stored pools for the comparison, seals what is written. */
  secrets: StoreSecrets;
  clock: Clock;
  logger: Logger;
  config: Readonly<Config>;
  /** The devnet's pool (its origins are the nodes started now), when the devnet runs. */
  devnetPool?: PoolConfig | undefined;
}

export const DIFF_COMMAND = 'switchyard config diff';

export async function poolsFromFile(options: PoolsFromFileOptions): Promise<void> {
  const { store, secrets, clock, logger, config } = options;
  const generated = options.devnetPool === undefined ? [] : [options.devnetPool];
  const apply = config.pools_from_file === 'apply';
  await seedFromConfig({
    store,
    secrets,
    clock,
    logger,
    accountId: config.account_id,
    pools: apply ? generated : [...config.pools, ...generated],
    refreshOrigins: generated.map((pool) => pool.name),
  });
  if (apply) await applyFilePools(options);
  else await warnOfDifferences(options);
  const stored = (await poolNamesOf(store.db, config.account_id)).map((pool) => pool.name);
  for (const warning of configWarnings(wholeParts(config), stored)) {
    logger.warn('config warning', { path: warning.path, warning: warning.message });
  }
}

/** `pools_from_file: apply`: the declared pools made to match the file; logs what changed. */
export async function applyFilePools(options: Omit<PoolsFromFileOptions, 'devnetPool'>): Promise<ApplyOutcome> {
  const { store, secrets, clock, logger, config } = options;
  const outcome = await applyDeclaredPools({
    store,
    secrets,
    clock,
    accountId: config.account_id,
    pools: config.pools,
    limits: config.limits,
  });
  if (outcome.created.length > 0 || outcome.updated.length > 0) {
    logger.info('applied the pools of the config file (pools_from_file: apply)', {
      created: outcome.created,
      updated: outcome.updated,
    });
  }
  return outcome;
}

async function warnOfDifferences(options: PoolsFromFileOptions): Promise<void> {
  const { store, secrets, logger, config } = options;
  const differences = await diffPools(store.db, secrets, config.account_id, config.pools);
  const differing = differences.filter((difference) => difference.kind === 'update').map((d) => d.pool.name);
  if (differing.length === 0) return;
  logger.warn(
    `the config file's pools differ from the store, which wins under pools_from_file: seed; \`${DIFF_COMMAND}\` shows how, \`switchyard config apply\` makes the store match`,
    { pools: differing, command: DIFF_COMMAND },
  );
}
