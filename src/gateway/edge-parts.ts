/**
 * What the gateway listener's edge (http/edge.ts) checks with — readiness (`/readyz`), keys (static and
 * the key table), trusted proxies, the WebSocket upgrade — built by gateway.ts `serveGateway`. A config
 * reload (SPEC §15) reaches readiness (networks), keys (`api_keys`, `require_key`) and the WebSocket
 * limits (for connections opened from then on); `trusted_proxies` needs a restart.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { GatewayKeyTable } from '../model/gateway-keys.js';
import type { HealthView } from '../model/health-view.js';
import { AddressRanges } from '../model/ip-address.js';
import type { PoolDirectory } from '../model/pool.js';
import type { StoreReadiness } from '../model/readiness.js';
import type { AccessLog } from './http/access-log.js';
import { GatewayAuth } from './http/key-auth.js';
import { GatewayReadiness } from './readiness.js';
import type { RpcHandler } from './rpc/handler.js';
import type { Subscriptions } from './rpc/subscriptions-port.js';
import { keySettings, wsSettings } from './settings.js';
import { WsMetrics } from './ws/metrics.js';
import { WsGateway } from './ws/upgrade.js';

/** What the edge is built from (gateway.ts `ServeGatewayOptions` has it). */
export interface EdgeSources {
  readonly config: Readonly<Config>;
  readonly directory: PoolDirectory;
  readonly health: HealthView;
  readonly storeReadiness: StoreReadiness;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: MetricsRegistry | undefined;
  readonly keys?: { readonly table: GatewayKeyTable } | undefined;
}

/** What the listener's edge checks with: readiness, keys, trusted proxies, the WebSocket upgrade. */
export function buildEdge(
  options: EdgeSources,
  handler: RpcHandler,
  hub: Subscriptions,
  accessLog: AccessLog,
): {
  readiness: GatewayReadiness;
  auth: GatewayAuth;
  trustedProxies: AddressRanges | undefined;
  websocket: WsGateway;
  reconfigure(config: Readonly<Config>): void;
} {
  const settings = options.config.gateway;
  const trustedProxies = settings.trusted_proxies.length > 0 ? new AddressRanges(settings.trusted_proxies) : undefined;
  const readiness = new GatewayReadiness({
    networks: options.config.networks,
    directory: options.directory,
    health: options.health,
    store: options.storeReadiness,
    clock: options.clock,
  });
  const auth = new GatewayAuth({ ...keySettings(options.config), table: options.keys?.table });
  const websocket = new WsGateway({
    handler,
    auth,
    keys: options.keys?.table,
    trustedProxies,
    hub,
    ...wsSettings(options.config),
    metrics: new WsMetrics(options.metrics),
    accessLog,
    clock: options.clock,
    logger: options.logger.child({ part: 'websocket' }),
  });
  const reconfigure = (config: Readonly<Config>): void => {
    readiness.reconfigure(config.networks);
    auth.reconfigure(keySettings(config));
    websocket.reconfigure(wsSettings(config));
  };
  return { readiness, auth, trustedProxies, websocket, reconfigure };
}
