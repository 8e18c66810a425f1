/**
 * How a command finds its config and store. `--config FILE` (else $SWITCHYARD_CONFIG, else the built-in
 * defaults) and `--data-dir DIR` (else $SWITCHYARD_DATA_DIR, else the file's `data_dir`) — the same
 * rules as `serve`, so a command works on the store `serve` uses. Commands that need only a few keys
 * read only those (config/load.ts `only`): a `${VAR}` elsewhere in the file may be unset for them.
 */
import { existsSync } from 'node:fs';
import { type LoadOptions, loadConfig } from '../config/load.js';
import { configFileFrom } from '../config/overrides.js';
import type { Config } from '../config/schema.js';
import { embeddedStoreFile, type OpenStoreOptions, openStore, type Store } from '../store/database.js';

/** The flags every store command takes, for its flag spec (args.ts). */
export const CONFIG_FLAGS = { config: 'string', 'data-dir': 'string' } as const;

export interface ConfigFlags {
  config?: string | undefined;
  'data-dir'?: string | undefined;
}

/** The keys that locate the store. */
export const STORE_KEYS = ['data_dir', 'database_url'] as const;

/** The config a command runs with; `only`: the top-level keys it reads (all when absent). */
export function commandConfig(flags: ConfigFlags, only?: readonly string[], env = process.env): Readonly<Config> {
  const options: LoadOptions = { env, settings: { dataDir: flags['data-dir'] } };
  return loadConfig(configFileFrom(flags.config, env), only === undefined ? options : { ...options, only });
}

/** Runs `use` on the store the config points at (the one `serve` with the same config uses); closes it after. */
export async function withStore(
  flags: ConfigFlags,
  only: readonly string[],
  use: (store: Store, config: Readonly<Config>) => Promise<number>,
): Promise<number> {
  const config = commandConfig(flags, only);
  const store = await openStore({ data_dir: config.data_dir, database_url: config.database_url });
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
}

/**
 * The store the config points at, when it exists: PostgreSQL always; the embedded SQLite file only when
 * it was created already (a check never creates a data directory).
 */
export async function openExistingStore(config: OpenStoreOptions): Promise<Store | undefined> {
  if (config.database_url === undefined && !existsSync(embeddedStoreFile(config.data_dir))) return undefined;
  return openStore({ data_dir: config.data_dir, database_url: config.database_url });
}
