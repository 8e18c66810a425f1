/**
 * `switchyard account create [--id ID] [--name NAME] [--config FILE] [--data-dir DIR]`: creates an
 * account in the store the config points at (the same one `serve` uses; safe while it runs) and prints
 * its id on stdout. Without --id a random 32-hex id is made. An id that exists already is an error
 * (exit 1). Only the store's settings are read from the config (with-store.ts).
 */

import { createAccount, isAccountId } from '../accounts/accounts.js';
import { systemClock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import { parseFlags } from './args.js';
import { CONFIG_FLAGS, STORE_KEYS, withStore } from './with-store.js';

export const ACCOUNT_USAGE =
  'usage: switchyard account create [--id ID] [--name NAME] [--config FILE] [--data-dir DIR]';

export async function account(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create') throw new SwitchyardError('CLI_USAGE', `account: ${ACCOUNT_USAGE}`);
  const flags = parseFlags(rest, { ...CONFIG_FLAGS, id: 'string', name: 'string' }, 'account create');
  if (flags.id !== undefined && !isAccountId(flags.id)) {
    throw new SwitchyardError(
      'CLI_USAGE',
      `account create: --id must be 32 lowercase hex characters, got "${flags.id}"`,
    );
  }
  return withStore(flags, STORE_KEYS, async (store) => {
    const created = await createAccount(store.db, systemClock, { id: flags.id, name: flags.name });
    if (created === undefined) {
      process.stderr.write(`switchyard account create: account ${flags.id} already exists\n`);
      return 1;
    }
    process.stdout.write(`${created.id}\n`);
    return 0;
  });
}
