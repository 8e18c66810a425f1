/**
 * What each part of the gateway reads of the config, one function per part: gateway.ts uses each when it
 * builds the part and again when a reload hands it a new config (SPEC §15), so both read the same keys.
 */
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import { ApiKeys } from './http/api-keys.js';
import type { Listener } from './http/listener.js';
import type { RpcSettings } from './rpc/handler-options.js';
import { rateSpec } from './rpc/rate-limit.js';

/** What forwarding reads of the config (at start and at each reload). */
export function forwardingSettings(config: Readonly<Config>) {
  return {
    requestTimeoutMs: config.gateway.request_timeout,
    maxAttempts: config.gateway.max_attempts,
    networks: config.networks,
  };
}

/** What the JSON-RPC rules read of the config (at start and at each reload). */
export function rpcSettings(config: Readonly<Config>): RpcSettings {
  const { rate_limit } = config.gateway;
  return {
    networks: config.networks,
    maxBatch: config.gateway.max_batch,
    rateSpec: rate_limit ? rateSpec(rate_limit) : undefined,
    filterLimits: config.gateway.websocket,
  };
}

/** Static keys and `require_key` (at start and at each reload). */
export function keySettings(config: Readonly<Config>) {
  const { api_keys, require_key } = config.gateway;
  return { staticKeys: api_keys ? new ApiKeys(api_keys) : undefined, requireKey: require_key };
}

/** WebSocket limits (at start and at each reload). */
export function wsSettings(config: Readonly<Config>) {
  return { limits: config.gateway.websocket, maxBodyBytes: config.gateway.max_body_bytes };
}

/**
 * A reload's listener limits (`maxConnections`: `gateway.max_connections` fitted to the file-descriptor
 * budget, as at start) and, with TLS, the certificate new handshakes get.
 */
export function adjustListener(
  listener: Listener,
  config: Readonly<Config>,
  maxConnections: number,
  tls: TlsPair | undefined,
): void {
  const settings = config.gateway;
  listener.adjust({
    maxBodyBytes: settings.max_body_bytes,
    streamStallMs: settings.stream_stall_timeout,
    maxConnections,
    maxConnectionsPerClient: settings.max_connections_per_client,
  });
  if (tls !== undefined) listener.secure(tls);
}
