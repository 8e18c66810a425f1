/**
 * `switchyard account create [--id ID] [--name NAME] [--config FILE]`: creates an account in the store
 * the config points at (the same one `serve` uses; safe while it runs) and prints its id on stdout.
 * Without --id a random 32-hex id is made. An id that exists already is an error (exit 1).
 */

import { createAccount, isAccountId } from '../accounts/accounts.js';
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { SwitchyardError } from '../errors/base.js';
import { openStore } from '../store/database.js';
import { parseFlags } from './args.js';

export async function account(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create') {
    throw new SwitchyardError('CLI_USAGE', 'account: usage: switchyard account create [--id ID] [--name NAME]');
  }
  const flags = parseFlags(rest, { config: 'string', id: 'string', name: 'string' }, 'account create');
  if (flags.id !== undefined && !isAccountId(flags.id)) {
    throw new SwitchyardError(
      'CLI_USAGE',
      `account create: --id must be 32 lowercase hex characters, got "${flags.id}"`,
    );
  }
  const config = loadConfig(flags.config);
  const store = await openStore({ data_dir: config.data_dir, database_url: config.database_url });
  try {
    const created = await createAccount(store.db, systemClock, { id: flags.id, name: flags.name });
    if (created === undefined) {
      process.stderr.write(`switchyard account create: account ${flags.id} already exists\n`);
      return 1;
    }
    process.stdout.write(`${created.id}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
