/**
 * `switchyard migrate-notifications`: moves every pool's legacy `notification_email` to account-level
 * health policies, against this server or any compatible v4 API (Cloudflare's included).
 *
 *   switchyard migrate-notifications --account ID [--api-url URL] [--token T] [--webhook-id ID]
 *                                    [--per-page N] [--dry-run] [--yes] [--config FILE]
 *
 * The token comes from --token or $CLOUDFLARE_API_TOKEN (prefer the variable: arguments show up in `ps`).
 * --api-url defaults to this server's API from the config: `http://{api.listen}/client/v4`.
 * Writes need confirmation: --yes, or an answer at the prompt when stdin and stdout are a terminal;
 * without a terminal and without --yes it refuses before contacting the API.
 *
 * Exit codes: 0 done (complete, nothing to do, or dry run) · 1 API or network error (stopped; safe to
 * re-run) · 2 usage error or refused for lack of confirmation · 3 incomplete (pools still have a legacy
 * email, or a policy did not read back as written) · 4 cancelled at the prompt.
 */

import { parseArgs } from 'node:util';
import { apiBaseUrl } from '../../config/api-url.js';
import { loadConfig } from '../../config/load.js';
import { configFileFrom } from '../../config/overrides.js';
import { isSwitchyardError, SwitchyardError } from '../../errors/base.js';
import { ask, isInteractive } from '../terminal.js';
import { otherAlertTypeLines } from './alert-types.js';
import { emptyResult, type MigrationUi, runMigration } from './execute.js';
import { formatPlan, formatSummary } from './format.js';
import type { Plan } from './plan.js';
import { V4ApiError, V4Client } from './v4-client.js';

export const EXIT = { ok: 0, apiError: 1, usage: 2, incomplete: 3, cancelled: 4 } as const;

export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** stdin and stdout are both a terminal, so a person can be asked. */
  interactive: boolean;
  ask(question: string): Promise<string>;
  /** For tests: how the API client fetches and waits between retries. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export const USAGE = `usage: switchyard migrate-notifications --account ID [--api-url URL] [--token T] [--webhook-id ID]
                                        [--per-page N] [--dry-run] [--yes] [--config FILE]
  --account ID      the account whose pools are migrated (32 hex characters)
  --api-url URL     v4 API base, e.g. https://api.cloudflare.com/client/v4 (default: this server's API
                    from the config, http://{api.listen}/client/v4)
  --token T         API token (default: $CLOUDFLARE_API_TOKEN; the variable keeps it out of \`ps\`)
  --webhook-id ID   also deliver every migrated alert to this webhook destination
  --per-page N      page size for listing and for the bulk PATCH, 1..1000 (default 25)
  --dry-run         print the plan and change nothing
  --yes             do not ask for confirmation (required when not run from a terminal)
  --config FILE     config file to find the local API (default: built-in defaults)
exit codes: 0 done · 1 API/network error · 2 usage · 3 incomplete · 4 cancelled (see docs/migration.md)
`;

export function processIo(): CommandIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    interactive: isInteractive(),
    ask,
  };
}

interface Args {
  accountId: string;
  apiUrl: string;
  token: string;
  webhookId?: string;
  perPage: number;
  dryRun: boolean;
  yes: boolean;
}

/** A wrong invocation: exit 2 with the usage text. The catalog's CLI_USAGE, as the other commands use. */
function usageError(message: string): SwitchyardError {
  return new SwitchyardError('CLI_USAGE', message);
}

function parse(argv: string[], env: NodeJS.ProcessEnv): Args | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        account: { type: 'string' },
        'api-url': { type: 'string' },
        token: { type: 'string' },
        'webhook-id': { type: 'string' },
        'per-page': { type: 'string' },
        'dry-run': { type: 'boolean' },
        yes: { type: 'boolean' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw usageError((err as Error).message);
  }
  if (values.help === true) return 'help';
  const accountId = values.account;
  if (typeof accountId !== 'string') throw usageError('--account ID is required');
  if (!/^[0-9a-f]{32}$/.test(accountId))
    throw usageError(`--account: "${accountId}" is not an account id (32 lowercase hex characters)`);
  const token = typeof values.token === 'string' ? values.token : env.CLOUDFLARE_API_TOKEN;
  if (token === undefined || token === '') {
    throw usageError('no API token: set CLOUDFLARE_API_TOKEN (preferred) or pass --token');
  }
  let perPage = 25;
  if (values['per-page'] !== undefined) {
    perPage = Number(values['per-page']);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 1000) {
      throw usageError(`--per-page: "${values['per-page']}" must be a whole number from 1 to 1000`);
    }
  }
  const webhookId = values['webhook-id'];
  if (webhookId === '') throw usageError('--webhook-id must not be empty');
  return {
    accountId,
    apiUrl: apiUrlFrom(values['api-url'] as string | undefined, values.config as string | undefined, env),
    token,
    webhookId: typeof webhookId === 'string' ? webhookId : undefined,
    perPage,
    dryRun: values['dry-run'] === true,
    yes: values.yes === true,
  };
}

function apiUrlFrom(flag: string | undefined, configFile: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined) {
    let url: URL;
    try {
      url = new URL(flag);
    } catch {
      throw usageError(`--api-url: "${flag}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError('--api-url must be http(s)://');
    return flag.replace(/\/+$/, '');
  }
  // Only the API's listener is read: a ${VAR} elsewhere in the file may be unset.
  const config = loadConfig(configFileFrom(configFile, env), { env, only: ['api'] });
  // A wildcard listen address is reachable on loopback.
  const listen = config.api.listen.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
  return apiBaseUrl({ ...config.api, listen });
}

export async function migrateNotifications(argv: string[], io: CommandIo = processIo()): Promise<number> {
  let args: Args | 'help';
  try {
    args = parse(argv, io.env);
  } catch (err) {
    if (isSwitchyardError(err)) {
      io.stderr(`switchyard migrate-notifications: ${err.message}\n${err.code === 'CLI_USAGE' ? USAGE : ''}`);
      return EXIT.usage;
    }
    throw err;
  }
  if (args === 'help') {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (!args.dryRun && !args.yes && !io.interactive) {
    io.stderr(
      'switchyard migrate-notifications: refusing to change anything without confirmation: not running in a ' +
        'terminal, so nobody can be asked. Re-run with --yes to proceed, or with --dry-run to see the plan.\n',
    );
    return EXIT.usage;
  }
  const { accountId, apiUrl, perPage, dryRun, webhookId } = args;
  const shownUrl = withoutCredentials(apiUrl);
  const client = new V4Client({ baseUrl: apiUrl, token: args.token, fetch: io.fetch, sleep: io.sleep });
  const println = (line: string): void => io.stdout(`${line}\n`);
  let firstPlan: Plan | undefined;
  const ui: MigrationUi = {
    print: println,
    showPlan: (plan) => {
      firstPlan = plan;
      println('');
      for (const line of formatPlan(plan, { accountId, apiUrl: shownUrl, perPage })) println(line);
      println('');
    },
    confirm: async (plan) => (args.yes ? true : confirm(plan, io)),
  };
  println(`${dryRun ? 'Dry run: ' : ''}migrating legacy notification_email of account ${accountId} at ${shownUrl}`);
  const result = emptyResult();
  try {
    await runMigration(client, { accountId, webhookId, perPage, dryRun }, ui, result);
  } catch (err) {
    if (!(err instanceof V4ApiError)) throw err;
    io.stderr(`switchyard migrate-notifications: ${err.message}\n${hint(err, accountId)}`);
    println('');
    for (const line of formatSummary(result, firstPlan)) println(line);
    println('  Stopped by the error above. Pools are only cleared once a verified policy covers them,');
    println('  so nothing unsafe happened; fix the cause and re-run the same command to finish.');
    return EXIT.apiError;
  }
  println('');
  for (const line of formatSummary(result, firstPlan)) println(line);
  for (const line of await otherAlertTypeLines(client, accountId)) println(line);
  switch (result.status) {
    case 'cancelled':
      return EXIT.cancelled;
    case 'incomplete':
      return EXIT.incomplete;
    default:
      // Complete, but a bulk PATCH touched pools that appeared mid-run: a person must look at them.
      return result.unchecked.length > 0 ? EXIT.incomplete : EXIT.ok;
  }
}

async function confirm(plan: Plan, io: CommandIo): Promise<boolean> {
  const create = plan.policies.filter((p) => p.action === 'create').length;
  const update = plan.policies.filter((p) => p.action === 'update').length;
  const answer = await io.ask(
    `Create ${create} and update ${update} policies, then clear notification_email on ${plan.legacy.length} pools? [y/N] `,
  );
  return /^y(es)?$/i.test(answer.trim());
}

/** The API URL as printed: any user:password in it stays out of the output. */
function withoutCredentials(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
}

function hint(err: V4ApiError, accountId: string): string {
  if (err.code === 10000 || err.status === 401 || err.status === 403) {
    return (
      `  Check the token (--token or CLOUDFLARE_API_TOKEN): it must belong to account ${accountId} and be able to ` +
      'read and edit load balancer pools and notifications.\n'
    );
  }
  if (err.status === undefined && err.errors.length === 0 && err.message.startsWith('cannot reach')) {
    return '  Is the API running at that address? Pass --api-url to point elsewhere.\n';
  }
  return '';
}
