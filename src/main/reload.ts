/**
 * Reload without restart (SPEC §15): `serve` re-reads its config file on SIGHUP (or `switchyard reload`)
 * through the one config pipeline (config/load.ts) and hands the result here.
 *
 * - An invalid file changes nothing: each error is logged (`config error`, with its `path`: the list
 *   `config check` prints) and the reload counts as failed. So does a TLS certificate or key that cannot
 *   be read or used (config/tls-files.ts), and pools the store refuses.
 * - Keys that need a restart (config/restart-keys.ts) keep their running value; each one that changed
 *   is logged at `warn` as "KEY needs a restart" (with the reason), and the rest of the file applies.
 * - Applied, in this order, so nothing routes to what does not exist yet: the file's pools
 *   (pools/from-file.ts: `pools_from_file: apply` applies them, `seed` creates missing ones and warns of
 *   differences, the config's warnings logged as at start), the pool directory refreshed; the outbound
 *   policy's trusted accounts; the gateway (its own parts, and in the worker processes); the API (routes
 *   made again from the new config, TLS); the config in force (the health monitor reads its networks
 *   there at each round); then the notification service (when `webhooks`, mail or retention settings
 *   changed) and the incident detector with the integrity alert (when what they watch changed) are
 *   restarted with it.
 * - One reload at a time: a reload asked for while one runs waits for it.
 *
 * Metrics: `switchyard_config_reloads_total` (reloads attempted, failed ones included),
 * `switchyard_config_reload_failures_total` and `switchyard_config_loaded_timestamp_seconds` (when the
 * config in force was loaded: at start, then at each reload that applied).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ConfigCheck } from '../config/load.js';
import { type ConfigProblem, problemLine } from '../config/problems.js';
import { changedKeys, keepRestartKeys } from '../config/restart-keys.js';
import type { Config } from '../config/schema.js';
import { loadTlsPair, type TlsPair } from '../config/tls-files.js';
import type { Counter } from '../metrics/registry.js';
import { poolsFromFile } from '../pools/from-file.js';
import type { StorePoolDirectory } from '../pools/store-directory.js';
import type { Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import type { LiveParts } from './live.js';
import type { RunningApi, RunningGateway } from './serving-parts.js';
import type { StartUp } from './start-up.js';

export type ReloadOutcome =
  | { ok: true; changed: string[]; kept: string[] }
  | { ok: false; errors: readonly ConfigProblem[] };

/** What a reload reaches in the running process. */
export interface ReloadTargets {
  store: Store;
  secrets: StoreSecrets;
  directory: StorePoolDirectory;
  gateway: RunningGateway;
  api: RunningApi;
  live: LiveParts;
  /** Starts a notification service from `live` (main/alerts.ts `startNotifications`). */
  startNotifications(): Promise<void>;
  /** Starts an incident detector from `live` (main/alerts.ts `startIncidents`). */
  startIncidents(): Promise<void>;
}

/** Top-level keys the notification service is built from (changing one restarts it). */
const NOTIFICATION_KEYS = [
  'smtp_url',
  'smtp_allow_insecure_auth',
  'mail_from',
  'deprecation_notice_interval',
  'notification_retention',
  'webhooks',
];

export class ConfigReloader {
  readonly #s: StartUp;
  readonly #targets: ReloadTargets;
  readonly #reloads: Counter;
  readonly #failures: Counter;
  #loadedAt: number;
  #running: Promise<unknown> = Promise.resolve();

  constructor(s: StartUp, targets: ReloadTargets) {
    this.#s = s;
    this.#targets = targets;
    this.#loadedAt = s.clock.now();
    this.#reloads = s.metrics.counter(
      'switchyard_config_reloads_total',
      'Config reloads attempted (SIGHUP, switchyard reload), failed ones included',
    );
    this.#failures = s.metrics.counter(
      'switchyard_config_reload_failures_total',
      'Config reloads that changed nothing: the file had errors or could not be applied',
    );
    this.#reloads.inc({}, 0);
    this.#failures.inc({}, 0);
    s.metrics.gauge(
      'switchyard_config_loaded_timestamp_seconds',
      'When the config in force was loaded (start, or the last reload that applied), Unix seconds',
      [],
      () => this.#loadedAt / 1000,
    );
  }

  /** Applies a re-read config (see the header); waits for a reload already under way first. */
  reload(check: ConfigCheck): Promise<ReloadOutcome> {
    const next = this.#running.then(() => this.#reload(check));
    this.#running = next.catch(() => undefined);
    return next;
  }

  async #reload(check: ConfigCheck): Promise<ReloadOutcome> {
    this.#reloads.inc();
    const logger = this.#s.logger;
    if (check.config === undefined) return this.#failed(check.source, check.errors);
    const running = this.#targets.live.config;
    const { config, kept } = keepRestartKeys(running, check.config);
    for (const key of kept) {
      logger.warn(`${key.path} needs a restart; the running value is kept`, { key: key.path, reason: key.why });
    }
    const tls = readTlsFiles(config);
    if ('problems' in tls) return this.#failed(check.source, tls.problems);
    try {
      await this.#applyPools(config);
    } catch (err) {
      logger.error('config reload: the pools of the file could not be applied', { err });
      return this.#failed(check.source, [{ code: 'CONFIG_INVALID', path: 'pools', message: (err as Error).message }]);
    }
    const changed = changedKeys(running, config);
    try {
      await this.#apply(running, config, tls, changed);
    } catch (err) {
      // Not a problem of the file: a part refused its new settings (a bug). What applied stays applied.
      logger.error('config reload failed while applying it; some parts may run on the new config', { err });
      this.#failures.inc();
      return { ok: false, errors: [{ code: 'CONFIG_INVALID', path: '', message: (err as Error).message }] };
    }
    this.#loadedAt = this.#s.clock.now();
    logger.info('config reloaded', { file: check.source, changed, needs_restart: kept.map((key) => key.path) });
    return { ok: true, changed, kept: kept.map((key) => key.path) };
  }

  /** The file's pools in the store (by `pools_from_file`), then the directory the gateway reads. */
  async #applyPools(config: Readonly<Config>): Promise<void> {
    const { store, secrets, directory } = this.#targets;
    await poolsFromFile({ store, secrets, clock: this.#s.clock, logger: this.#s.part('store'), config });
    await directory.refresh();
  }

  async #apply(
    running: Readonly<Config>,
    config: Readonly<Config>,
    tls: ListenerPairs,
    changed: readonly string[],
  ): Promise<void> {
    const { live, gateway, api } = this.#targets;
    live.outbound.retrust(config.outbound.trusted_accounts);
    gateway.reconfigure(config, tls.gateway);
    api.reconfigure(config, tls.api);
    live.config = config;
    if (changed.some((key) => NOTIFICATION_KEYS.includes(key.split('.')[0] as string))) {
      await live.restart('notifications', () => this.#targets.startNotifications());
    }
    if (!isDeepStrictEqual(watchedByIncidents(running), watchedByIncidents(config))) {
      await live.restart('incidents', () => this.#targets.startIncidents());
    }
  }

  #failed(source: string, errors: readonly ConfigProblem[]): ReloadOutcome {
    this.#failures.inc();
    const logger = this.#s.logger;
    for (const problem of errors) {
      logger.error(`config error: ${problemLine(problem)}`, { path: problem.path || '(root)', error: problem.message });
    }
    logger.error('config reload failed: nothing changed, the config in force stays', {
      file: source,
      errors: errors.length,
    });
    return { ok: false, errors };
  }
}

interface ListenerPairs {
  gateway: TlsPair | undefined;
  api: TlsPair | undefined;
}

/** Each listener's certificate and key, read again (certificate rotation), or why they cannot be. */
function readTlsFiles(config: Readonly<Config>): ListenerPairs | { problems: ConfigProblem[] } {
  const pairs: ListenerPairs = { gateway: undefined, api: undefined };
  const problems: ConfigProblem[] = [];
  for (const listener of ['gateway', 'api'] as const) {
    const files = config[listener].tls;
    if (files === undefined) continue;
    const loaded = loadTlsPair(files, `${listener}.tls`);
    if ('problem' in loaded) problems.push(loaded.problem);
    else pairs[listener] = loaded.pair;
  }
  return problems.length > 0 ? { problems } : pairs;
}

/** What the incident detector and the integrity alert are built from: the networks they watch, their thresholds. */
function watchedByIncidents(config: Readonly<Config>): unknown {
  return Object.entries(config.networks).map(([name, network]) => [
    name,
    network.pools,
    network.finality_depth,
    network.incidents,
    network.verify_anchor,
  ]);
}
