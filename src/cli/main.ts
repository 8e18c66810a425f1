/**
 * CLI dispatcher: `switchyard <command> [options]`. Each command lives in its own file, exports its usage
 * and returns an exit code: 0 ok, 1 runtime failure, 2 usage or configuration error. Commands load
 * lazily so `token create` does not pay for the gateway's imports.
 *
 * Manners: `switchyard help` (and `--help`, `-h`) prints the overview, `switchyard help COMMAND` and
 * `switchyard COMMAND … --help` print that command's usage (exit 0); `switchyard --version` prints the
 * version (version.ts). No command at all prints the overview and exits 2; an unknown one suggests the
 * closest command.
 */
import { didYouMean } from '../config/suggest.js';
import { isSwitchyardError } from '../errors/base.js';
import { versionLine } from './version.js';

type Command = (argv: string[]) => Promise<number>;

interface CommandEntry {
  summary: string;
  /** The command and its usage; the command handles `--help` itself when `ownHelp` is set. */
  load: () => Promise<{ run: Command; usage: string; ownHelp?: boolean }>;
}

const COMMANDS: Record<string, CommandEntry> = {
  serve: {
    summary: 'run the gateway, the API, the monitors and the notifications',
    load: async () => {
      const module = await import('./serve.js');
      return { run: module.serve, usage: module.SERVE_USAGE };
    },
  },
  config: {
    summary: 'check the config file, show how its pools differ from the store, apply them',
    load: async () => {
      const module = await import('./config.js');
      return { run: module.configCommand, usage: module.CONFIG_USAGE };
    },
  },
  reload: {
    summary: 'make the running serve re-read its config file (SIGHUP through data_dir/serve.pid)',
    load: async () => {
      const module = await import('./reload.js');
      return { run: module.reload, usage: module.RELOAD_USAGE };
    },
  },
  account: {
    summary: 'create an account',
    load: async () => {
      const module = await import('./account.js');
      return { run: module.account, usage: module.ACCOUNT_USAGE };
    },
  },
  token: {
    summary: 'create, list and revoke API tokens',
    load: async () => {
      const module = await import('./token.js');
      return { run: module.token, usage: module.TOKEN_USAGE };
    },
  },
  key: {
    summary: 'create, list and revoke gateway keys',
    load: async () => {
      const module = await import('./key.js');
      return { run: module.key, usage: module.KEY_USAGE };
    },
  },
  secrets: {
    summary: 're-encrypt the secrets in the store under a new key (secrets rotate; works while serve runs)',
    load: async () => {
      const module = await import('./secrets.js');
      return { run: module.secrets, usage: module.SECRETS_USAGE };
    },
  },
  'migrate-notifications': {
    summary: "move pools' notification_email to account-level policies",
    load: async () => {
      const module = await import('./migrate-notifications/command.js');
      return { run: module.migrateNotifications, usage: module.USAGE, ownHelp: true };
    },
  },
};

const HELP_FLAGS = new Set(['--help', '-h']);

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(overview());
    return 2;
  }
  if (HELP_FLAGS.has(command)) return print(overview());
  if (command === '--version' || command === '-V' || command === 'version') return print(`${versionLine()}\n`);
  if (command === 'help') return rest[0] === undefined ? print(overview()) : help(rest[0]);
  const entry = COMMANDS[command];
  if (entry === undefined) return unknownCommand(command);
  try {
    const loaded = await entry.load();
    if (!loaded.ownHelp && rest.some((arg) => HELP_FLAGS.has(arg))) return print(loaded.usage);
    return await loaded.run(rest);
  } catch (err) {
    process.stderr.write(`switchyard ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return isSwitchyardError(err) && (err.code.startsWith('CONFIG_') || err.code === 'CLI_USAGE') ? 2 : 1;
  }
}

async function help(command: string): Promise<number> {
  const entry = COMMANDS[command];
  if (entry === undefined) return unknownCommand(command);
  return print((await entry.load()).usage);
}

function unknownCommand(command: string): number {
  const hint = didYouMean(command, Object.keys(COMMANDS));
  process.stderr.write(`switchyard: unknown command "${command}"${hint}\n${overview()}`);
  return 2;
}

function print(text: string): number {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`);
  return [
    'usage: switchyard COMMAND [options]',
    '',
    'commands:',
    ...lines,
    '',
    '  switchyard help COMMAND, or COMMAND --help: the options of a command',
    '  switchyard --version: the version (and commit, in a git checkout)',
    '',
    'Every command reads the config file given by --config FILE, else $SWITCHYARD_CONFIG, else the',
    'built-in offline defaults. SWITCHYARD_GATEWAY_LISTEN, SWITCHYARD_API_LISTEN and SWITCHYARD_DATA_DIR',
    "override the file's gateway.listen, api.listen and data_dir (a command's flags override them).",
    '',
  ].join('\n');
}
