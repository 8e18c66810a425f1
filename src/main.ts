/**
 * The composition root: config → store → secrets → devnet → pool directory + gateway keys + origin scores
 * + health → gateway → API → notifications → incidents → transaction ledger. Nothing else wires the parts
 * of a process together (the CLI only calls this; a gateway worker process wires its own gateway through
 * the same gateway/gateway.ts `serveGateway`). Start-up is the list of named steps below, each a function
 * in src/main/ that starts one part and registers how to stop it (main/start-up.ts). A failing step
 * undoes what was started; `close()` first closes both listeners together (stop accepting, finish
 * in-flight requests within `shutdown_grace`), then stops the rest in reverse order of start: background
 * work, then child processes, then the store. With `redis_url`, the gateway's rate limits are leased from Redis and
 * shared by every instance (limits/shared-limits.ts, SPEC §11).
 *
 * With `gateway.workers` > 1 (SPEC §11) this process is the control process: everything above runs here
 * except the gateway listener, which worker processes serve (cluster/control.ts starts them and feeds
 * them pools, health and chain state); `/metrics` then sums this process's metrics and theirs.
 *
 * What follows the config file rather than the process — the config in force, the outbound policy, the
 * notification service and the incident detector — is held in one LiveParts (main/live.ts), where a
 * reload (SPEC §15) finds and replaces it without touching the listeners. `reload(check)` applies a
 * config the file was re-read into (main/reload.ts: what applies live, what needs a restart, an invalid
 * file changing nothing); `serve` calls it on SIGHUP.
 */

import type { ChainTracker } from './chain/tracker.js';
import type { ChainFeedback, ChainView } from './chain/types.js';
import type { Clock } from './clock.js';
import type { ConfigCheck } from './config/load.js';
import { outboundPolicy } from './config/outbound.js';
import type { SettingSources } from './config/overrides.js';
import type { Config } from './config/schema.js';
import type { Devnet } from './devnet/devnet.js';
import type { GatewayOptions } from './gateway/gateway.js';
import type { BufferPool } from './http1/index.js';
import type { Ledger } from './ledger/ledger.js';
import type { Logger } from './log.js';
import { startIncidents, startNotifications } from './main/alerts.js';
import { createLedger, startLedger } from './main/ledger.js';
import { LiveParts } from './main/live.js';
import { ConfigReloader, type ReloadOutcome } from './main/reload.js';
import { startApi, startGatewayListener, startHealth, startLimits, startOriginScores } from './main/serving-parts.js';
import { StartUp } from './main/start-up.js';
import {
  openStore,
  openStoreSecrets,
  seedPools,
  startClockOffsetCheck,
  startDevnetIfEnabled,
  startGatewayKeys,
  startOriginStats,
  startPoolDirectory,
} from './main/store-parts.js';
import type { Resolver } from './outbound/policy.js';
import type { Store } from './store/database.js';
import type { StoreSecrets } from './store/store-secrets.js';

export interface SwitchyardOptions {
  config: Readonly<Config>;
  clock?: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Resolves names for the outbound target policy (default: the system's DNS); tests inject answers. */
  resolve?: Resolver;
  /** The gateway's read buffers for large answers (default: its own); tests inject one to watch it. */
  buffers?: BufferPool;
  /** Makes the gateway's subscription hub (gateway.ts `subscriptions`); tests inject a small one. */
  subscriptions?: GatewayOptions['subscriptions'];
  /** Where the listen addresses came from (flag, environment, file), named when one cannot bind. */
  sources?: Pick<SettingSources, 'gateway.listen' | 'api.listen'>;
}

export interface Switchyard {
  /** e.g. http://127.0.0.1:8545 — JSON-RPC at `${gatewayUrl}/v1/{network}`. */
  readonly gatewayUrl: string;
  /** e.g. http://127.0.0.1:8787/client/v4 */
  readonly apiUrl: string;
  readonly store: Store;
  /** Opens and seals the secrets the store holds (store/store-secrets.ts). */
  readonly secrets: StoreSecrets;
  /** The anvil devnet when `devnet.enabled` (the offline default), else undefined. */
  readonly devnet: Devnet | undefined;
  /** The gateway's chain tracker (SPEC §9): heads, reorgs and finality of the configured networks. */
  readonly chain: ChainTracker;
  /** The transaction ledger (SPEC §19). */
  readonly ledger: Ledger;
  /** Applies a config re-read from the file (SIGHUP): main/reload.ts. One at a time. */
  reload(check: ConfigCheck): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

export async function startSwitchyard(options: SwitchyardOptions): Promise<Switchyard> {
  const s = new StartUp(options);
  try {
    const store = await openStore(s);
    const secrets = await openStoreSecrets(s, store);
    const devnet = await startDevnetIfEnabled(s);
    await seedPools(s, store, secrets, devnet);
    // One outbound target policy for every address contacted on an account's behalf.
    const live = new LiveParts(s.config, outboundPolicy(s.config, options.resolve));
    const directory = await startPoolDirectory(s, store, secrets);
    const keys = await startGatewayKeys(s, store);
    const stats = startOriginStats(s, store);
    await startClockOffsetCheck(s, store);
    const scores = startOriginScores(s, directory, live);
    // What probes reveal of an origin's head reaches the gateway's chain tracker once it runs.
    let chain: (ChainFeedback & Pick<ChainView, 'networkHead'>) | undefined;
    const monitor = await startHealth(s, store, secrets, directory, live, scores, {
      sawHead: (pool, origin, block) => chain?.sawHead(pool, origin, block),
      // max_block_lag is judged against the head the tracker adopted, never one origin's claim (SPEC §20).
      adoptedHead: (network) => chain?.networkHead(network),
    });
    const limits = await startLimits(s, keys);
    const ledger = createLedger(s, store, live);
    const parts = { store, secrets, directory, monitor, keys, stats, scores, limits, live, sends: ledger.sends };
    const gateway = await startGatewayListener(s, parts);
    chain = gateway.chain;
    const api = await startApi(s, parts, gateway);
    s.onStop(() => live.stop());
    const alerts = {
      startNotifications: () => startNotifications(s, store, secrets, live, api.url),
      startIncidents: () => startIncidents(s, store, live, gateway.chain),
    };
    await alerts.startNotifications();
    await alerts.startIncidents();
    await startLedger(s, ledger, directory, live, gateway.chain);
    const reloader = new ConfigReloader(s, { store, secrets, directory, gateway, api, live, ...alerts });
    s.logger.info('switchyard started', { gateway: gateway.url, api: api.url });
    return running(s, {
      gatewayUrl: gateway.url,
      apiUrl: api.url,
      store,
      secrets,
      devnet,
      chain: gateway.chain,
      ledger,
      reload: (check) => reloader.reload(check),
    });
  } catch (err) {
    await s.unwind();
    throw err;
  }
}

/** The started Switchyard: `close()` unwinds once, however often it is called. */
function running(s: StartUp, parts: Omit<Switchyard, 'close'>): Switchyard {
  let closing: Promise<void> | undefined;
  return {
    ...parts,
    close: () => {
      closing ??= s.unwind().then(() => s.logger.info('switchyard stopped'));
      return closing;
    },
  };
}
