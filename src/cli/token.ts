/**
 * API tokens from the command line, on the same store as `serve` (they work while it runs):
 *
 * - `token create --account ID [--name NAME] [--read-only] [--config FILE]` makes a new token and prints
 *   it as the last (only) line of stdout — the one time it is shown; the store keeps only its sha256.
 *   Details (token id, access) go to stderr. An unknown account is an error (exit 1), except the
 *   config's own `account_id`, which is created when missing, as `serve` would on start. The name
 *   follows the API's rule (≤ 120 characters, no control characters).
 * - `token list --account ID [--config FILE]` prints one line per token of the account, expired and
 *   disabled ones included: id, access (read/write), status, issued, last used, name (JSON-quoted, so
 *   no name can forge a line). Never the value or its hash.
 * - `token revoke --account ID TOKEN_ID [--config FILE]` deletes the token, like
 *   `DELETE /accounts/{account_id}/tokens/{token_id}`: its next request is 401 in every process sharing
 *   the store (authentication reads the token on every request). A token id not of that account is
 *   exit 1.
 */

import { ensureAccount, findAccount, isAccountId } from '../accounts/accounts.js';
import { countTokens, createToken, deleteToken, listTokens, tokenStatus } from '../accounts/tokens.js';
import { systemClock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import { hasControlCharacters } from '../model/plain-text.js';
import { ID_PATTERN } from '../store/ids.js';
import { parseArgs, parseFlags } from './args.js';
import { CONFIG_FLAGS, STORE_KEYS, withStore } from './with-store.js';

/** What token commands read of the config: the store, and the routing account (created when missing). */
const TOKEN_KEYS = [...STORE_KEYS, 'account_id'];

export const TOKEN_USAGE = [
  'usage: switchyard token create --account ID [--name NAME] [--read-only] [--config FILE] [--data-dir DIR]',
  '       switchyard token list --account ID [--config FILE] [--data-dir DIR]',
  '       switchyard token revoke --account ID TOKEN_ID [--config FILE] [--data-dir DIR]',
].join('\n');

export async function token(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'create') return create(rest);
  if (sub === 'list') return list(rest);
  if (sub === 'revoke') return revoke(rest);
  throw new SwitchyardError('CLI_USAGE', `token: ${TOKEN_USAGE}`);
}

function requireAccount(command: string, account: string | undefined): string {
  if (account === undefined)
    throw new SwitchyardError('CLI_USAGE', `${command}: --account is required; ${TOKEN_USAGE}`);
  if (!isAccountId(account)) {
    throw new SwitchyardError('CLI_USAGE', `${command}: --account must be 32 lowercase hex characters`);
  }
  return account;
}

async function create(argv: string[]): Promise<number> {
  const flags = parseFlags(
    argv,
    { ...CONFIG_FLAGS, account: 'string', name: 'string', 'read-only': 'boolean' },
    'token create',
  );
  const account = requireAccount('token create', flags.account);
  // The API's rule for token names: a name is printed by `token list` and shown in API answers.
  if (flags.name !== undefined && (flags.name.length > 120 || hasControlCharacters(flags.name))) {
    throw new SwitchyardError('CLI_USAGE', 'token create: --name takes at most 120 characters, no control characters');
  }
  return withStore(flags, TOKEN_KEYS, async (store, config) => {
    if (account === config.account_id) {
      await ensureAccount(store.db, systemClock, account, 'default');
    } else if ((await findAccount(store.db, account)) === undefined) {
      process.stderr.write(
        `switchyard token create: no account ${account}; create it first with ` +
          `switchyard account create --id ${account}\n`,
      );
      return 1;
    }
    const readOnly = flags['read-only'] === true;
    const created = await createToken(store.db, systemClock, { accountId: account, name: flags.name, readOnly });
    process.stderr.write(
      `created ${readOnly ? 'read-only' : 'read-write'} token ${created.id} for account ${account}; ` +
        'it is shown once, below\n',
    );
    process.stdout.write(`${created.token}\n`);
    return 0;
  });
}

async function list(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, { ...CONFIG_FLAGS, account: 'string' }, 'token list');
  const account = requireAccount('token list', flags.account);
  return withStore(flags, TOKEN_KEYS, async (store) => {
    const now = systemClock.now();
    const total = await countTokens(store.db, account);
    const tokens = await listTokens(store.db, account, total, 0);
    const rows = tokens.map((found) => [
      found.id,
      found.read_only ? 'read' : 'write',
      tokenStatus(found, now),
      found.created_on,
      found.last_used_on ?? 'never',
      JSON.stringify(found.name),
    ]);
    const header = ['ID', 'ACCESS', 'STATUS', 'ISSUED', 'LAST USED', 'NAME'];
    const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] as string).length)));
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)))
        .join('  ')
        .trimEnd();
    process.stdout.write(`${[header, ...rows].map(line).join('\n')}\n`);
    process.stderr.write(`${tokens.length} token${tokens.length === 1 ? '' : 's'} in account ${account}\n`);
    return 0;
  });
}

async function revoke(argv: string[]): Promise<number> {
  const { flags, args } = parseArgs(argv, { ...CONFIG_FLAGS, account: 'string' }, 'token revoke', ['TOKEN_ID']);
  const account = requireAccount('token revoke', flags.account);
  const id = args[0] as string;
  if (!ID_PATTERN.test(id)) {
    throw new SwitchyardError(
      'CLI_USAGE',
      'token revoke: TOKEN_ID must be 32 lowercase hex characters (see token list)',
    );
  }
  return withStore(flags, TOKEN_KEYS, async (store) => {
    if (!(await deleteToken(store.db, account, id))) {
      process.stderr.write(`switchyard token revoke: account ${account} has no token ${id} (see token list)\n`);
      return 1;
    }
    process.stderr.write(`revoked token ${id} of account ${account}; it is refused from its next request on\n`);
    return 0;
  });
}
