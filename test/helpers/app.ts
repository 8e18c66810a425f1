/**
 * Starts a whole Switchyard in-process for a test: a fresh temporary data_dir, both listeners on
 * 127.0.0.1:0 (free ports), logs silent unless SWITCHYARD_TEST_LOG is set (e.g. "debug").
 * `raw` is a config object as it would be written in YAML; it goes through the real config pipeline.
 * `reloadWith(raw)` reloads the running app (SPEC §15) from another such object, written to a file in
 * the data_dir and read back through the pipeline as `serve` does on SIGHUP.
 * `close()` stops the app and removes the data_dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/clock.js';
import { buildConfig, checkConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { BufferPool } from '../../src/http1/index.js';
import { createLogger, type Logger, type LogLevel } from '../../src/log.js';
import type { ReloadOutcome } from '../../src/main/reload.js';
import { type Switchyard, type SwitchyardOptions, startSwitchyard } from '../../src/main.js';
import type { Resolver } from '../../src/outbound/policy.js';
import { type AnvilNode, startTestAnvil } from './anvil.js';
import type { TestStoreLocation } from './store.js';

export interface TestApp extends Switchyard {
  readonly config: Readonly<Config>;
  readonly dataDir: string;
  /** `${gatewayUrl}/v1/${network}` */
  rpcUrl(network?: string): string;
  /** Reloads from `raw` (completed as `startApp` completes its config) through a file, as SIGHUP does. */
  reloadWith(raw: Raw): Promise<ReloadOutcome>;
}

export interface TestAppOptions {
  clock?: Clock;
  logger?: Logger;
  /** DNS answers for the outbound target policy (default: the system's resolver). */
  resolve?: Resolver;
  /** The gateway's read buffers for large answers (default: its own). */
  buffers?: BufferPool;
  /** The gateway's subscription hub (default: none). */
  subscriptions?: SwitchyardOptions['subscriptions'];
}

type Raw = Record<string, unknown>;

export async function startApp(raw: Raw = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const level = (process.env.SWITCHYARD_TEST_LOG as LogLevel | undefined) ?? 'silent';
  const tree = (from: Raw): Raw => ({
    data_dir: dataDir,
    log_level: level,
    ...from,
    gateway: { listen: '127.0.0.1:0', ...(from.gateway as Raw | undefined) },
    api: { listen: '127.0.0.1:0', ...(from.api as Raw | undefined) },
  });
  const config = buildConfig(tree(raw), '(test config)');
  let app: Switchyard;
  try {
    app = await startSwitchyard({
      config,
      logger: options.logger ?? createLogger({ level }),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.resolve ? { resolve: options.resolve } : {}),
      ...(options.buffers ? { buffers: options.buffers } : {}),
      ...(options.subscriptions ? { subscriptions: options.subscriptions } : {}),
    });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    gatewayUrl: app.gatewayUrl,
    apiUrl: app.apiUrl,
    store: app.store,
    secrets: app.secrets,
    devnet: app.devnet,
    chain: app.chain,
    ledger: app.ledger,
    config,
    dataDir,
    rpcUrl: (network = 'sepolia') => `${app.gatewayUrl}/v1/${network}`,
    reload: (check) => app.reload(check),
    reloadWith: (next) => {
      const file = join(dataDir, 'reloaded.yaml');
      writeFileSync(file, JSON.stringify(tree(next)));
      return app.reload(checkConfig(file));
    },
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a whole Switchyard on an existing store (its data_dir and, on PostgreSQL, its database), for tests
 * that stop and start again on the same store; closing it leaves the store in place. `env` is all the
 * environment it reads (SWITCHYARD_SECRETS_KEY, …): none of this process's.
 */
export async function startOnStore(
  location: Pick<TestStoreLocation, 'data_dir' | 'database_url'>,
  raw: Raw = {},
  env: NodeJS.ProcessEnv = {},
): Promise<Switchyard> {
  const level = (process.env.SWITCHYARD_TEST_LOG as LogLevel | undefined) ?? 'silent';
  const config = buildConfig(
    {
      data_dir: location.data_dir,
      ...(location.database_url === undefined ? {} : { database_url: location.database_url }),
      log_level: level,
      gateway: { listen: '127.0.0.1:0' },
      api: { listen: '127.0.0.1:0' },
      ...raw,
    },
    '(test config)',
  );
  return startSwitchyard({ config, env, logger: createLogger({ level }) });
}

/** A config `pools:` entry with one origin per URL (origins named o0, o1, …). */
export function poolOf(name: string, urls: readonly string[], extra: Raw = {}): Raw {
  return { name, origins: urls.map((address, i) => ({ name: `o${i}`, address })), ...extra };
}

/** `count` independent anvil nodes (one genesis, nothing mirrored) as the pool `pair` of `sepolia`. */
export interface AnvilPair {
  readonly nodes: AnvilNode[];
  readonly app: TestApp;
  close(): Promise<void>;
}

export async function startAnvilPair(network: Raw = {}, count = 2): Promise<AnvilPair> {
  const nodes = await Promise.all(Array.from({ length: count }, () => startTestAnvil()));
  let app: TestApp;
  try {
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['pair'], ...network } },
      pools: [
        poolOf(
          'pair',
          nodes.map((node) => node.url),
        ),
      ],
    });
  } catch (err) {
    await Promise.all(nodes.map((node) => node.stop()));
    throw err;
  }
  return {
    nodes,
    app,
    close: async () => {
      await app.close();
      await Promise.all(nodes.map((node) => node.stop()));
    },
  };
}
