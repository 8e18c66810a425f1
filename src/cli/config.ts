/**
 * `switchyard config check|diff|apply` (SPEC §15): the config file as the truth an operator keeps in Git.
 *
 * `config check [--config FILE] [--data-dir DIR]` runs the whole config pipeline (config/load.ts) and
 * prints EVERY problem at once on stdout, one per line as `path: message` (errors first, then warnings
 * as `path: warning: message`), and a summary on stderr. Warnings (config/warnings.ts) need the routing
 * account's pool names: they are read from the store the config points at when it exists and answers
 * (an embedded store not created yet has no pools; a store that cannot be read is itself a warning).
 * Exit 0 clean, 1 warnings only, 2 errors.
 *
 * `config diff` and `config apply`: config-pools.ts.
 */
import { type ConfigCheck, checkConfig } from '../config/load.js';
import { configFileFrom } from '../config/overrides.js';
import { type ConfigWarning, problemLine } from '../config/problems.js';
import { configWarnings } from '../config/warnings.js';
import { SwitchyardError } from '../errors/base.js';
import { poolNamesOf } from '../pools/pool-queries.js';
import type { Store } from '../store/database.js';
import { parseFlags } from './args.js';
import { configApply, configDiff } from './config-pools.js';
import { CONFIG_FLAGS, openExistingStore } from './with-store.js';

export const CONFIG_USAGE = [
  'usage: switchyard config check [--config FILE] [--data-dir DIR]',
  '       switchyard config diff [--config FILE] [--data-dir DIR]',
  '       switchyard config apply [--yes] [--prune] [--config FILE] [--data-dir DIR]',
  '',
  '  check   every problem of the file at once (path: message), with warnings; exit 0 clean, 1 warnings, 2 errors',
  "  diff    how the file's pools (and their monitors) differ from the store, field by field; exit 0 none, 1 some",
  "  apply   make the store match the file's pools (create, update); --prune also deletes the account's pools",
  '          the file does not declare (asks first, unless --yes; refused without a terminal and without --yes)',
  '',
  'diff and apply open the secrets key as serve does: $SWITCHYARD_SECRETS_KEY, else the key file',
  "(secrets_key_file, default DATA_DIR/secrets.key); a key that is not the store's is exit 2.",
].join('\n');

export async function configCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'check') return check(rest);
  if (sub === 'diff') return configDiff(rest);
  if (sub === 'apply') return configApply(rest);
  throw new SwitchyardError('CLI_USAGE', `config: ${CONFIG_USAGE}`);
}

async function check(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, CONFIG_FLAGS, 'config check');
  const checked = checkConfig(configFileFrom(flags.config, process.env), { settings: { dataDir: flags['data-dir'] } });
  const warnings = checked.parts === undefined ? [] : await warningsWithStore(checked);
  const lines = [
    ...checked.errors.map(problemLine),
    ...warnings.map((warning) => problemLine({ path: warning.path, message: `warning: ${warning.message}` })),
  ];
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  const { errors } = checked;
  process.stderr.write(
    errors.length + warnings.length === 0
      ? `${checked.source}: no problems\n`
      : `${checked.source}: ${count(errors.length, 'error')}, ${count(warnings.length, 'warning')}\n`,
  );
  return errors.length > 0 ? 2 : warnings.length > 0 ? 1 : 0;
}

/** The config's warnings, with the routing account's pools read from the store when it can be. */
async function warningsWithStore(checked: ConfigCheck): Promise<ConfigWarning[]> {
  const parts = checked.parts;
  if (parts === undefined) return [];
  const stored = await storedPoolNames(checked);
  const warnings = configWarnings(parts, stored.names);
  return stored.problem === undefined ? warnings : [stored.problem, ...warnings];
}

async function storedPoolNames(checked: ConfigCheck): Promise<{ names: string[]; problem?: ConfigWarning }> {
  const parts = checked.parts;
  if (parts === undefined) return { names: [] };
  const unread = (why: string): { names: string[]; problem: ConfigWarning } => ({
    names: [],
    problem: { path: '(store)', message: `${why}; pool names were checked against the file only` },
  });
  if (['data_dir', 'database_url', 'account_id'].some((key) => parts.broken.has(key))) {
    return unread('not read: the settings that locate it have errors');
  }
  const { config } = parts;
  let store: Store | undefined;
  try {
    store = await openExistingStore(config);
    return { names: store === undefined ? [] : (await poolNamesOf(store.db, config.account_id)).map((p) => p.name) };
  } catch (err) {
    return unread(`cannot be read (${(err as Error).message})`);
  } finally {
    await store?.close();
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
