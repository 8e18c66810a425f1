/**
 * `switchyard secrets rotate [--config FILE]`: re-encrypts every secret in the store (origin credentials,
 * secret headers, webhook URLs and secrets) under a new key, in one transaction (secrets/rotate.ts), and
 * puts the new key where the old one was: the key file, or — when the key comes from
 * `SWITCHYARD_SECRETS_KEY` — it takes the new key from `SWITCHYARD_SECRETS_KEY_NEW`. It works while
 * `serve` runs; stdout says which key replaced which and what to do next. A wrong or missing current key
 * is exit 2 and changes nothing. It reads only the store's keys, `secrets_key_file` and `log_level` of
 * the config.
 */
import { systemClock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import { createLogger } from '../log.js';
import { rotateSecrets } from '../secrets/rotate.js';
import { parseFlags } from './args.js';
import { CONFIG_FLAGS, STORE_KEYS, withStore } from './with-store.js';

export const SECRETS_USAGE = 'usage: switchyard secrets rotate [--config FILE] [--data-dir DIR]';

/** What rotation reads of the config: the store, where the key file is, the log level. */
const SECRETS_KEYS = [...STORE_KEYS, 'secrets_key_file', 'log_level'];

export async function secrets(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'rotate') throw new SwitchyardError('CLI_USAGE', `secrets: ${SECRETS_USAGE}`);
  const flags = parseFlags(rest, CONFIG_FLAGS, 'secrets rotate');
  return withStore(flags, SECRETS_KEYS, async (store, config) => {
    const logger = createLogger({ level: config.log_level, clock: systemClock });
    const rotation = await rotateSecrets({ store, config, clock: systemClock, logger });
    const { pools, monitors, webhook_destinations: webhooks } = rotation.resealed;
    process.stdout.write(
      [
        `secrets re-encrypted under key ${rotation.to} (was ${rotation.from}); rows holding secrets: ${pools} pools, ${monitors} monitors, ${webhooks} webhook destinations`,
        `the new key is in ${rotation.keyAt}: back it up, apart from the database; backups taken before now need the old key`,
        '',
      ].join('\n'),
    );
    return 0;
  });
}
