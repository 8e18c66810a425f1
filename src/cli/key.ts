/**
 * Gateway keys from the command line (SPEC §11), on the same store as `serve` (they work while it
 * runs). Keys belong to the routing account (`account_id` in the config), so no --account is taken.
 *
 * - `key create [--name NAME] [--networks A,B] [--requests-per-second N [--burst N]] [--daily-quota N]
 *   [--disabled] [--config FILE]` makes a key and prints its value (`swk_…`) as the last (only) line of
 *   stdout — the one time it is shown; the store keeps only its sha256. Details go to stderr. Same
 *   rules as the API: name ≤ 120 characters without control characters, networks configured ones,
 *   limits within model/limit-bounds.ts, burst defaulting to max(1, ceil(requests per second)).
 * - `key list [--config FILE]` prints one line per key: id, enabled, networks, rate limit, daily quota,
 *   created, last used, name (JSON-quoted, so no name can forge a line). Never the value or its hash.
 * - `key revoke KEY_ID [--config FILE]` deletes the key, like `DELETE …/gateway/keys/{key_id}`: every
 *   `serve` sharing the store refuses it within 1 s (their key tables poll every 250 ms). An unknown id
 *   is exit 1.
 */
import { ensureAccount } from '../accounts/accounts.js';
import { systemClock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import {
  countGatewayKeys,
  createGatewayKey,
  deleteGatewayKey,
  type GatewayKeyFields,
  listGatewayKeys,
} from '../keys/key-queries.js';
import { type KeyRateLimit, keyRateLimit } from '../model/gateway-keys.js';
import { BURST, DAILY_QUOTA, type LimitRange, outOfRange, REQUESTS_PER_SECOND } from '../model/limit-bounds.js';
import { hasControlCharacters } from '../model/plain-text.js';
import { ID_PATTERN } from '../store/ids.js';
import { parseArgs, parseFlags } from './args.js';
import { CONFIG_FLAGS, STORE_KEYS, withStore } from './with-store.js';

/** What key commands read of the config: the store, the routing account and its networks. */
const KEY_KEYS = [...STORE_KEYS, 'account_id', 'networks'];

export const KEY_USAGE = [
  'usage: switchyard key create [--name NAME] [--networks A,B] [--requests-per-second N [--burst N]] [--daily-quota N] [--disabled] [--config FILE] [--data-dir DIR]',
  '       switchyard key list [--config FILE] [--data-dir DIR]',
  '       switchyard key revoke KEY_ID [--config FILE] [--data-dir DIR]',
].join('\n');

export async function key(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'create') return create(rest);
  if (sub === 'list') return list(rest);
  if (sub === 'revoke') return revoke(rest);
  throw new SwitchyardError('CLI_USAGE', `key: ${KEY_USAGE}`);
}

function usageError(message: string): SwitchyardError {
  return new SwitchyardError('CLI_USAGE', `key create: ${message}`);
}

/** A number within `range` (model/limit-bounds.ts) from a flag; undefined when the flag is absent. */
function bounded(flag: string, value: string | undefined, range: LimitRange): number | undefined {
  if (value === undefined) return undefined;
  const n = value.trim() === '' ? Number.NaN : Number(value);
  const refusal = outOfRange(range, n);
  if (refusal !== undefined) throw usageError(`--${flag} ${refusal}, not ${JSON.stringify(value)}`);
  return n;
}

async function create(argv: string[]): Promise<number> {
  const flags = parseFlags(
    argv,
    {
      ...CONFIG_FLAGS,
      name: 'string',
      networks: 'string',
      'requests-per-second': 'string',
      burst: 'string',
      'daily-quota': 'string',
      disabled: 'boolean',
    },
    'key create',
  );
  const name = flags.name ?? '';
  if (name.length > 120 || hasControlCharacters(name)) {
    throw usageError('--name takes at most 120 characters, no control characters');
  }
  const rate = bounded('requests-per-second', flags['requests-per-second'], REQUESTS_PER_SECOND);
  const burst = bounded('burst', flags.burst, BURST);
  if (burst !== undefined && rate === undefined) throw usageError('--burst needs --requests-per-second');
  const quota = bounded('daily-quota', flags['daily-quota'], DAILY_QUOTA);
  return withStore(flags, KEY_KEYS, async (store, config) => {
    const networks = flags.networks === undefined ? null : [...new Set(flags.networks.split(',').map((n) => n.trim()))];
    for (const network of networks ?? []) {
      if (!Object.hasOwn(config.networks, network)) {
        const known = Object.keys(config.networks).sort().join(', ') || 'none';
        throw usageError(`--networks: ${JSON.stringify(network)} is not a configured network (configured: ${known})`);
      }
    }
    const rateLimit: KeyRateLimit | null =
      rate === undefined ? null : keyRateLimit({ requests_per_second: rate, burst });
    const fields: GatewayKeyFields = {
      name,
      enabled: flags.disabled !== true,
      networks,
      rate_limit: rateLimit,
      daily_quota: quota ?? null,
    };
    // The routing account exists once `serve` has run; created here otherwise, as `serve` would.
    await ensureAccount(store.db, systemClock, config.account_id, 'default');
    const created = await createGatewayKey(store.db, systemClock, config.account_id, fields);
    process.stderr.write(
      `created ${created.enabled ? '' : 'disabled '}gateway key ${created.id} of account ${config.account_id}; ` +
        'it is shown once, below\n',
    );
    process.stdout.write(`${created.value}\n`);
    return 0;
  });
}

async function list(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, CONFIG_FLAGS, 'key list');
  return withStore(flags, KEY_KEYS, async (store, config) => {
    const account = config.account_id;
    const keys = await listGatewayKeys(store.db, account, await countGatewayKeys(store.db, account), 0);
    const rows = keys.map((found) => [
      found.id,
      found.enabled ? 'yes' : 'no',
      found.networks === null ? 'all' : found.networks.join(','),
      found.rate_limit === null
        ? 'default'
        : `${found.rate_limit.requests_per_second}/s burst ${found.rate_limit.burst}`,
      found.daily_quota === null ? 'none' : String(found.daily_quota),
      found.created_on,
      found.last_used_on ?? 'never',
      JSON.stringify(found.name),
    ]);
    const header = ['ID', 'ENABLED', 'NETWORKS', 'RATE LIMIT', 'DAILY QUOTA', 'CREATED', 'LAST USED', 'NAME'];
    const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] as string).length)));
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)))
        .join('  ')
        .trimEnd();
    process.stdout.write(`${[header, ...rows].map(line).join('\n')}\n`);
    process.stderr.write(`${keys.length} gateway key${keys.length === 1 ? '' : 's'} in account ${account}\n`);
    return 0;
  });
}

async function revoke(argv: string[]): Promise<number> {
  const { flags, args } = parseArgs(argv, CONFIG_FLAGS, 'key revoke', ['KEY_ID']);
  const id = args[0] as string;
  if (!ID_PATTERN.test(id)) {
    throw new SwitchyardError('CLI_USAGE', 'key revoke: KEY_ID must be 32 lowercase hex characters (see key list)');
  }
  return withStore(flags, KEY_KEYS, async (store, config) => {
    if (!(await deleteGatewayKey(store.db, config.account_id, id))) {
      process.stderr.write(`switchyard key revoke: there is no gateway key ${id} (see key list)\n`);
      return 1;
    }
    process.stderr.write(`revoked gateway key ${id}; every gateway sharing this store refuses it within 1 s\n`);
    return 0;
  });
}
