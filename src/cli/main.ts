/**
 * CLI dispatcher: `switchyard <command> [options]`. Each command lives in its own file and returns an exit
 * code: 0 ok, 1 runtime failure, 2 usage or configuration error. Commands load lazily so `token create`
 * does not pay for the gateway's imports.
 */
import { isSwitchyardError } from '../errors/base.js';

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  serve: {
    summary: 'serve [--config FILE]   run the gateway, API, monitors and notifications',
    load: async () => (await import('./serve.js')).serve,
  },
  account: {
    summary: 'account create [--id ID] [--name NAME] [--config FILE]   create an account, print its id',
    load: async () => (await import('./account.js')).account,
  },
  token: {
    summary: [
      'token create --account ID [--name NAME] [--read-only] [--config FILE]   print a new API token',
      "  switchyard token list --account ID [--config FILE]   list the account's tokens (never their values)",
      '  switchyard token revoke --account ID TOKEN_ID [--config FILE]   delete a token; refused from its next request on',
    ].join('\n'),
    load: async () => (await import('./token.js')).token,
  },
  key: {
    summary: [
      'key create [--name NAME] [--networks A,B] [--requests-per-second N [--burst N]] [--daily-quota N] [--disabled] [--config FILE]   print a new gateway key',
      '  switchyard key list [--config FILE]   list the gateway keys (never their values)',
      '  switchyard key revoke KEY_ID [--config FILE]   delete a gateway key; refused by every gateway within 1 s',
    ].join('\n'),
    load: async () => (await import('./key.js')).key,
  },
  secrets: {
    summary:
      'secrets rotate [--config FILE]   re-encrypt the secrets in the store under a new key (works while serve runs)',
    load: async () => (await import('./secrets.js')).secrets,
  },
  'migrate-notifications': {
    summary:
      'migrate-notifications --account ID [--api-url URL] [--token T] [--webhook-id ID] [--per-page N] [--dry-run] [--yes] [--config FILE]   move pool emails to policies',
    load: async () => (await import('./migrate-notifications/command.js')).migrateNotifications,
  },
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage());
    return command === undefined ? 2 : 0;
  }
  const entry = COMMANDS[command];
  if (entry === undefined) {
    process.stderr.write(`switchyard: unknown command "${command}"\n${usage()}`);
    return 2;
  }
  try {
    return await (await entry.load())(rest);
  } catch (err) {
    process.stderr.write(`switchyard ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return isSwitchyardError(err) && (err.code.startsWith('CONFIG_') || err.code === 'CLI_USAGE') ? 2 : 1;
  }
}

function usage(): string {
  const lines = Object.values(COMMANDS).map((entry) => `  switchyard ${entry.summary}`);
  return `usage:\n${lines.join('\n')}\n`;
}
