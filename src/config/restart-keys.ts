/**
 * Which config keys a reload (SPEC §15 "Reload without restart": SIGHUP or `switchyard reload`) applies
 * and which need a restart. Every key not listed in RESTART_KEYS reloads live (docs/configuration.md
 * "What reloads live" has the table, kept in step with this list by restart-keys.test.ts).
 *
 * A reloaded config keeps the running value of every restart key whose value changed
 * (`keepRestartKeys`), and names those keys, so the caller can log each as "needs a restart". `gateway.tls`
 * and `api.tls` are live while they stay set (their files are re-read: certificate rotation); setting or
 * removing one changes the listener's scheme, which needs a restart. A network's own `ledger` settings
 * need a restart as the top-level `ledger` does (`networks.NAME.ledger`).
 */
import { isDeepStrictEqual } from 'node:util';
import { deepFreeze } from './load.js';
import type { Config } from './schema.js';

export interface RestartKey {
  /** The dotted key, e.g. `gateway.listen`. */
  readonly path: string;
  /** Why a running process cannot take a new value (logged with it). */
  readonly why: string;
}

const LEDGER_WHY = 'the transaction ledger follows the settings it was started with';

export const RESTART_KEYS: readonly RestartKey[] = [
  { path: 'gateway.listen', why: 'the listener is bound to its address' },
  { path: 'api.listen', why: 'the listener is bound to its address' },
  { path: 'data_dir', why: 'the store and the outbox are open there' },
  { path: 'database_url', why: 'the store is open' },
  { path: 'redis_url', why: 'the shared limits are connected' },
  { path: 'gateway.workers', why: 'the worker processes are running' },
  { path: 'account_id', why: 'the pool directory, gateway keys and monitors follow the routing account' },
  { path: 'devnet', why: 'the devnet nodes are running' },
  { path: 'log_level', why: 'the loggers are made at start' },
  { path: 'log_format', why: 'the loggers are made at start' },
  {
    path: 'secrets_key_file',
    why: 'the store secrets are opened with the key file named at start',
  },
  {
    path: 'gateway.connections_per_origin',
    why: 'origin connection pools and the file-descriptor budget are sized at start',
  },
  { path: 'gateway.cache_max_bytes', why: 'the response cache is sized at start' },
  {
    path: 'gateway.trusted_proxies',
    why: 'open connections were counted per client address under the old list',
  },
  { path: 'api.console', why: 'the console is mounted at start' },
  { path: 'ledger', why: LEDGER_WHY },
];

/** The TLS settings whose presence (not their files) needs a restart. */
const TLS_KEYS = ['gateway', 'api'] as const;

export interface KeptConfig {
  /** The reloaded config with the running value of every restart key that changed. */
  readonly config: Config;
  /** The restart keys whose value changed (and was kept), in RESTART_KEYS order. */
  readonly kept: readonly RestartKey[];
}

/** `next` (frozen again) with the running value of each restart key it changes. */
export function keepRestartKeys(running: Config, next: Config): KeptConfig {
  const kept: RestartKey[] = [];
  const config = structuredClone(next) as Config;
  for (const key of RESTART_KEYS) {
    const before = valueAt(running, key.path);
    if (isDeepStrictEqual(before, valueAt(next, key.path))) continue;
    setAt(config, key.path, structuredClone(before));
    kept.push(key);
  }
  for (const listener of TLS_KEYS) {
    if ((running[listener].tls === undefined) === (next[listener].tls === undefined)) continue;
    setAt(config, `${listener}.tls`, structuredClone(running[listener].tls));
    kept.push({ path: `${listener}.tls`, why: 'turning TLS on or off changes the listener' });
  }
  // The ledger is built at start from the top-level `ledger` and each network's own `networks.NAME.ledger`.
  for (const [name, network] of Object.entries(next.networks)) {
    const before = running.networks[name];
    if (before === undefined || isDeepStrictEqual(before.ledger, network.ledger)) continue;
    setAt(config, `networks.${name}.ledger`, structuredClone(before.ledger));
    kept.push({ path: `networks.${name}.ledger`, why: LEDGER_WHY });
  }
  // outbound.trusted_accounts defaults to [account_id]: with account_id kept, so is that default.
  if (kept.some((key) => key.path === 'account_id') && isDerivedTrust(next)) {
    config.outbound = { trusted_accounts: [running.account_id] };
  }
  return { config: deepFreeze(config), kept };
}

/**
 * The keys whose values differ between two configs, as dotted paths: a top-level key, one level down in
 * the objects of settings (`gateway.max_batch`, `webhooks.timeout`), a network by name (`networks.NAME`).
 * Names only: a value (it may hold a secret) is never part of the answer.
 */
export function changedKeys(before: Config, after: Config): string[] {
  const changed: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = (before as Record<string, unknown>)[key];
    const b = (after as Record<string, unknown>)[key];
    if (isDeepStrictEqual(a, b)) continue;
    if (key === 'pools' || !isRecord(a) || !isRecord(b)) {
      changed.push(key);
      continue;
    }
    for (const inner of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!isDeepStrictEqual(a[inner], b[inner])) changed.push(`${key}.${inner}`);
    }
  }
  return changed;
}

function isDerivedTrust(config: Config): boolean {
  return isDeepStrictEqual(config.outbound.trusted_accounts, [config.account_id]);
}

function valueAt(config: Config, path: string): unknown {
  let node: unknown = config;
  for (const key of path.split('.')) {
    if (!isRecord(node)) return undefined;
    node = node[key];
  }
  return node;
}

function setAt(config: Config, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let node = config as unknown as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
