/**
 * `switchyard config diff` and `switchyard config apply [--yes] [--prune]` (SPEC §15), on the store
 * `serve` uses (also while it runs: serve notices a changed pool within its 250 ms poll). Both read only
 * what they need of the config (the store, `account_id`, `pools`, `networks`, `devnet`, `outbound`,
 * `limits`, `secrets_key_file`, `log_level`): a `${VAR}` elsewhere in the file may be unset.
 *
 * Both open the store's secrets as `serve` does (secrets/open.ts): the key from `SWITCHYARD_SECRETS_KEY`
 * or the key file, checked against the store (a wrong or missing key: exit 2, nothing read or written).
 * The diff compares the stored pools' opened values with the file's and shows both masked.
 *
 * diff: one block per declared pool that differs — `+ NAME` (not in the store), `~ NAME` with a line per
 * field `field: store → file` (masked) — and `- NAME` for the account's pools the file does not declare
 * (kept; `--prune` would delete them; they do not count as differences). Exit 0 none, 1 some.
 * An embedded store not created yet holds no pools; the diff does not create it.
 *
 * apply: creates and updates the declared pools (pools/apply.ts), printing what it did; a second run
 * changes nothing. `--prune` also deletes the account's pools that are neither declared, nor the devnet's,
 * nor named by a network: it lists them and asks first (the terminal; y or yes), unless `--yes`; without
 * a terminal and without `--yes` it refuses (exit 2). It asks before anything is written: cancelled,
 * nothing changes (exit 1). Plain apply never asks. Exit 0 done.
 */
import { systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import { createLogger } from '../log.js';
import { applyDeclaredPools, prunablePools, prunePools } from '../pools/apply.js';
import { diffPools, type PoolDifference } from '../pools/diff.js';
import { openSecrets } from '../secrets/open.js';
import type { Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import { parseFlags } from './args.js';
import { ask, isInteractive } from './terminal.js';
import { CONFIG_FLAGS, commandConfig, openExistingStore, STORE_KEYS, withStore } from './with-store.js';

/** What diff and apply read of the config. */
const POOL_KEYS = [
  ...STORE_KEYS,
  'account_id',
  'pools',
  'networks',
  'devnet',
  'outbound',
  'limits',
  'secrets_key_file',
  'log_level',
];

/** The store's secrets, opened as `serve` opens them. */
function storeSecrets(store: Store, config: Readonly<Config>): Promise<StoreSecrets> {
  const logger = createLogger({ level: config.log_level, clock: systemClock }).child({ part: 'secrets' });
  return openSecrets({ store, config, env: process.env, clock: systemClock, logger });
}

export async function configDiff(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, CONFIG_FLAGS, 'config diff');
  const config = commandConfig(flags, POOL_KEYS);
  const store = await openExistingStore(config);
  try {
    const differences =
      store === undefined
        ? config.pools.map((pool): PoolDifference => ({ kind: 'create', pool }))
        : await diffPools(store.db, await storeSecrets(store, config), config.account_id, config.pools);
    const extra = store === undefined ? [] : await prunablePools(store.db, config.account_id, keptNames(config));
    const lines = differences.flatMap(differenceLines);
    for (const pool of extra) lines.push(`- ${pool.name}: only in the store (kept; config apply --prune deletes it)`);
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    const differing = differences.filter((difference) => difference.kind !== 'same').length;
    process.stderr.write(
      differing === 0
        ? `the store matches the ${config.pools.length} pool(s) of the file\n`
        : `${differing} of the ${config.pools.length} pool(s) of the file differ from the store; \`switchyard config apply\` makes it match\n`,
    );
    return differing === 0 ? 0 : 1;
  } finally {
    await store?.close();
  }
}

export async function configApply(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, { ...CONFIG_FLAGS, yes: 'boolean', prune: 'boolean' }, 'config apply');
  return withStore(flags, POOL_KEYS, async (store, config) => {
    const secrets = await storeSecrets(store, config);
    const doomed = flags.prune ? await prunablePools(store.db, config.account_id, keptNames(config)) : [];
    if (doomed.length > 0 && !flags.yes && !(await confirmed(doomed.map((pool) => pool.name)))) {
      process.stderr.write('switchyard config apply: cancelled; nothing changed\n');
      return 1;
    }
    const outcome = await applyDeclaredPools({
      store,
      secrets,
      clock: systemClock,
      accountId: config.account_id,
      pools: config.pools,
      limits: config.limits,
    });
    const deleted = await prunePools(store, config.account_id, doomed);
    const lines = [
      ...outcome.created.map((name) => `created ${name}`),
      ...outcome.updated.map((name) => `updated ${name}`),
      ...deleted.map((name) => `deleted ${name}`),
    ];
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    process.stderr.write(
      `${outcome.created.length} created, ${outcome.updated.length} updated, ${outcome.unchanged.length} unchanged, ${deleted.length} deleted\n`,
    );
    return 0;
  });
}

/** Asks the person at the terminal; without one, refuses (a usage error, exit 2). */
async function confirmed(names: readonly string[]): Promise<boolean> {
  if (!isInteractive()) {
    throw new SwitchyardError(
      'CLI_USAGE',
      `config apply: --prune would delete ${names.length} pool(s) (${names.join(', ')}) and nobody can be asked: ` +
        'not running in a terminal. Re-run with --yes to delete them, or without --prune; nothing changed.',
    );
  }
  process.stdout.write(`--prune deletes these pools of the store, which the file does not declare:\n`);
  for (const name of names) process.stdout.write(`  ${name}\n`);
  const answer = await ask(`Delete ${names.length} pool(s)? [y/N] `);
  return /^y(es)?$/i.test(answer.trim());
}

/** Pools prune keeps: declared in the file, the devnet's, or named by a network. */
function keptNames(config: Readonly<Config>): Set<string> {
  const kept = new Set(config.pools.map((pool) => pool.name));
  if (config.devnet?.enabled) kept.add(config.devnet.pool);
  for (const network of Object.values(config.networks)) for (const pool of network.pools) kept.add(pool);
  return kept;
}

function differenceLines(difference: PoolDifference): string[] {
  const name = difference.pool.name;
  if (difference.kind === 'same') return [];
  if (difference.kind === 'create') {
    return [`+ ${name}: not in the store (config apply creates it, ${difference.pool.origins.length} origin(s))`];
  }
  return [`~ ${name}:`, ...difference.changes.map((change) => `    ${change.field}: ${change.store} → ${change.file}`)];
}
