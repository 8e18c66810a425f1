/**
 * Under `pools_from_file: apply` the pools the config file declares belong to the file: `serve` applies
 * the file again at every start (and reload), overwriting API edits of them (SPEC §15). Such an edit still
 * succeeds; its answer says so in `messages` (code 1100), naming the pools, so a client — or a person in
 * the console — learns it before the change silently disappears. Only the routing account's pools can
 * be declared.
 */
import type { Config } from '../config/schema.js';
import type { ApiReply } from './envelope.js';

export const FILE_OWNED_MESSAGE_CODE = 1100;

/** The message for a write to these pools, or none when the file does not own any of them. */
export function fileOwnedMessages(
  config: Readonly<Config>,
  pools: readonly { account_id: string; name: string }[],
): NonNullable<ApiReply['messages']> {
  if (config.pools_from_file !== 'apply') return [];
  const declared = new Set(config.pools.map((pool) => pool.name));
  const owned = pools.filter((pool) => pool.account_id === config.account_id && declared.has(pool.name));
  if (owned.length === 0) return [];
  const names = [...new Set(owned.map((pool) => `"${pool.name}"`))].join(', ');
  return [
    {
      code: FILE_OWNED_MESSAGE_CODE,
      message:
        `pool ${names} is declared in the config file and pools_from_file is apply: the next start or reload ` +
        'of serve applies the file again and overwrites this change; change the file instead',
    },
  ];
}
