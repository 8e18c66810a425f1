/** The store a CLI command works on: the one `serve` with the same config file uses; closed after `use`. */
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { openStore, type Store } from '../store/database.js';

export async function withStore(
  configFile: string | undefined,
  use: (store: Store, config: Config) => Promise<number>,
): Promise<number> {
  const config = loadConfig(configFile);
  const store = await openStore({ data_dir: config.data_dir, database_url: config.database_url });
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
}
