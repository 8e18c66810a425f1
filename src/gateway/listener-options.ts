/**
 * The gateway listener's options from `gateway.*`: its connection limits — `max_connections`, lowered at
 * start (with a warning naming both numbers) to fit the file-descriptor budget (fd-budget.ts), and
 * `max_connections_per_client`, which a trusted proxy's connections do not count against — the stall
 * rule for streams, the body limit, TLS and the read buffers it shares with the origin clients.
 */
import type { Config } from '../config/schema.js';
import type { BufferPool } from '../http1/index.js';
import type { Logger } from '../log.js';
import type { AddressRanges } from '../model/ip-address.js';
import type { PoolDirectory } from '../model/pool.js';
import { connectionBudget, openFilesLimit } from './fd-budget.js';
import type { ListenerOptions } from './http/listener.js';
import type { GatewayMetrics } from './metrics.js';
import { CHAIN_CONNECTIONS_PER_ORIGIN } from './upstream/chain-source.js';
import { LEDGER_CONNECTIONS_PER_ORIGIN } from './upstream/origin-calls.js';
import { originEndpoints } from './upstream/origin-clients.js';

/** What the options are read from (gateway.ts `ServeGatewayOptions` has it). */
export interface ListenerSources {
  readonly config: Readonly<Config>;
  /** The pools at start: their origin endpoints count in the descriptor reserve. */
  readonly directory: PoolDirectory;
  readonly logger: Logger;
}

/** The listener's settings, its connection limit fitted to the file-descriptor budget (fd-budget.ts). */
export function listenerOptions(
  options: ListenerSources,
  trustedProxies: AddressRanges | undefined,
  metrics: GatewayMetrics,
  buffers: BufferPool,
): ListenerOptions {
  const settings = options.config.gateway;
  return {
    listen: settings.listen,
    tls: settings.tls,
    maxBodyBytes: settings.max_body_bytes,
    streamStallMs: settings.stream_stall_timeout,
    maxConnections: fittedMaxConnections(options),
    maxConnectionsPerClient: settings.max_connections_per_client,
    // A trusted proxy carries many clients: its connections count only against max_connections.
    uncountedPeer: trustedProxies === undefined ? undefined : (address) => trustedProxies.contains(address),
    refused: (limit) => metrics.connectionRefused(limit),
    buffers,
  };
}

/**
 * `gateway.max_connections`, lowered with a warning when it does not fit RLIMIT_NOFILE (fd-budget.ts): at
 * start and at each reload (SPEC §15).
 */
export function fittedMaxConnections(options: ListenerSources): number {
  const settings = options.config.gateway;
  const fdLimit = openFilesLimit();
  const budget = connectionBudget({
    configured: settings.max_connections,
    fdLimit,
    originConnections:
      (settings.connections_per_origin + CHAIN_CONNECTIONS_PER_ORIGIN + ledgerConnections(options.config)) *
      originEndpoints(options.directory.allPools().flatMap((pool) => pool.origins)),
  });
  if (budget.lowered) {
    options.logger.warn(
      `gateway.max_connections lowered to ${budget.maxConnections}: the process may open ${fdLimit} files ` +
        `(RLIMIT_NOFILE) and keeps ${budget.reserve} for the API listener, the store and origin connections; ` +
        'raise the limit (ulimit -n, LimitNOFILE=) to allow more',
      {
        max_connections: budget.maxConnections,
        configured: settings.max_connections,
        fd_limit: fdLimit,
        reserve: budget.reserve,
      },
    );
  }
  return budget.maxConnections;
}

/** The transaction ledger's own sockets per origin endpoint, while any network keeps a ledger (SPEC §19). */
function ledgerConnections(config: Readonly<Config>): number {
  return Object.values(config.networks).some((network) => network.ledger.enabled) ? LEDGER_CONNECTIONS_PER_ORIGIN : 0;
}
