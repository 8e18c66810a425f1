/**
 * The store-backed GatewayKeyTable the gateway authenticates with: an in-memory table of the routing
 * account's usable (enabled) keys, looked up synchronously by digest on the hot path, refreshed
 *   - at once when this process changes keys (the API awaits `refresh()` after each commit), and
 *   - by polling every `pollMs` (default 250 ms) for changes made elsewhere (another `serve` sharing the
 *     PostgreSQL database, the CLI on SQLite). A poll reads only `id, version` of each key and reloads
 *     when that fingerprint differs (every API write bumps `version`; creates and deletes change the set).
 * So a disable, delete or roll made anywhere is refused everywhere within pollMs + one reload (< 1 s).
 * If the store is unreachable the last table stays in use and the failure is logged once per outage.
 * `snapshot()` gives the table as plain JSON for another process (GatewayKeySnapshot).
 * Metrics (when given a registry): `switchyard_gateway_keys` (usable keys in the table) and
 * `switchyard_gateway_key_reloads_total` (times the table was reloaded after a change). No key id or value
 * is ever a label.
 */
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import {
  type GatewayKeyRecord,
  type GatewayKeySnapshot,
  type GatewayKeyTable,
  StaticKeyTable,
} from '../model/gateway-keys.js';
import type { Store } from '../store/database.js';
import { PolledReload, sameVersions } from '../store/polled-reload.js';
import { enforcedGatewayKeys, gatewayKeyVersions } from './key-queries.js';

export const DEFAULT_KEY_POLL_MS = 250;

export interface StoreKeyDirectoryOptions {
  store: Store;
  /** The routing account (config `account_id`): only its keys open the gateway. */
  accountId: string;
  logger: Logger;
  pollMs?: number;
  metrics?: MetricsRegistry;
}

export class StoreKeyDirectory implements GatewayKeyTable {
  readonly #store: Store;
  readonly #accountId: string;
  readonly #logger: Logger;
  readonly #table = new StaticKeyTable();
  #versions = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** One reload at a time; store failures logged once per outage (store/polled-reload.ts). */
  readonly #reloader: PolledReload;
  #generation = 0;
  #reloads: { inc(): void } = { inc() {} };

  private constructor(options: StoreKeyDirectoryOptions) {
    this.#store = options.store;
    this.#accountId = options.accountId;
    this.#logger = options.logger;
    this.#reloader = new PolledReload({
      reload: () => this.#reload(),
      logger: options.logger,
      failed: 'gateway keys: cannot read keys; keeping the last table',
      recovered: 'gateway keys: store reachable again',
    });
  }

  /** Loads the first table (errors propagate: serve must not start with keys unknown) and starts polling. */
  static async start(options: StoreKeyDirectoryOptions): Promise<StoreKeyDirectory> {
    const directory = new StoreKeyDirectory(options);
    if (options.metrics !== undefined) {
      options.metrics.gauge(
        'switchyard_gateway_keys',
        'Usable gateway keys in the table the gateway authenticates with',
        [],
        () => directory.#table.snapshot().keys.length,
      );
      directory.#reloads = options.metrics.counter(
        'switchyard_gateway_key_reloads_total',
        'Times the gateway key table was reloaded after a change',
      );
    }
    await directory.#reload();
    directory.#timer = setInterval(() => void directory.#poll(), options.pollMs ?? DEFAULT_KEY_POLL_MS);
    directory.#timer.unref();
    return directory;
  }

  lookup(digest: string): GatewayKeyRecord | undefined {
    return this.#table.lookup(digest);
  }

  byId(id: string): GatewayKeyRecord | undefined {
    return this.#table.byId(id);
  }

  onChange(listener: () => void): () => void {
    return this.#table.onChange(() => {
      try {
        listener();
      } catch (err) {
        this.#logger.error('gateway key listener failed', { err });
      }
    });
  }

  snapshot(): GatewayKeySnapshot {
    return this.#table.snapshot();
  }

  /** Reloads now (after an in-process write). Never throws; resolves when the table is current. */
  refresh(): Promise<void> {
    return this.#reloader.refresh();
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #poll(): Promise<void> {
    return this.#reloader.poll(
      async () => !sameVersions(await gatewayKeyVersions(this.#store.db, this.#accountId), this.#versions),
    );
  }

  async #reload(): Promise<void> {
    const { keys, versions } = await enforcedGatewayKeys(this.#store.db, this.#accountId);
    if (sameVersions(versions, this.#versions) && this.#generation > 0) return;
    this.#versions = versions;
    this.#generation += 1;
    this.#reloads.inc();
    this.#table.replace({ version: String(this.#generation), keys });
  }
}
