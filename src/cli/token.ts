/**
 * `switchyard token create --account ID [--name NAME] [--read-only] [--config FILE]`: makes a new API
 * token for an existing account and prints it as the last (only) line of stdout — the one time it is
 * shown; the store keeps only its sha256. Details (token id, access) go to stderr. Uses the same store
 * as `serve` and works while it runs. An unknown account is an error (exit 1), except the config's own
 * `account_id`, which is created when missing, as `serve` would on start.
 */
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { SwitchyardError } from '../errors/base.js';
import { ensureAccount, findAccount, isAccountId } from '../store/accounts.js';
import { openStore } from '../store/database.js';
import { createToken } from '../store/tokens.js';
import { parseFlags } from './args.js';

const USAGE = 'usage: switchyard token create --account ID [--name NAME] [--read-only] [--config FILE]';

export async function token(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create') throw new SwitchyardError('CLI_USAGE', `token: ${USAGE}`);
  const flags = parseFlags(
    rest,
    { config: 'string', account: 'string', name: 'string', 'read-only': 'boolean' },
    'token create',
  );
  if (flags.account === undefined)
    throw new SwitchyardError('CLI_USAGE', `token create: --account is required; ${USAGE}`);
  if (!isAccountId(flags.account)) {
    throw new SwitchyardError('CLI_USAGE', `token create: --account must be 32 lowercase hex characters`);
  }
  const config = loadConfig(flags.config);
  const store = await openStore({ data_dir: config.data_dir, database_url: config.database_url });
  try {
    if (flags.account === config.account_id) {
      await ensureAccount(store.db, systemClock, flags.account, 'default');
    } else if ((await findAccount(store.db, flags.account)) === undefined) {
      process.stderr.write(
        `switchyard token create: no account ${flags.account}; create it first with ` +
          `switchyard account create --id ${flags.account}\n`,
      );
      return 1;
    }
    const readOnly = flags['read-only'] === true;
    const created = await createToken(store.db, systemClock, { accountId: flags.account, name: flags.name, readOnly });
    process.stderr.write(
      `created ${readOnly ? 'read-only' : 'read-write'} token ${created.id} for account ${flags.account}; ` +
        'it is shown once, below\n',
    );
    process.stdout.write(`${created.token}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
