import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseCidr } from '../model/ip-address.js';
import { rateLimitInput } from '../model/limit-bounds.js';
import { plainText } from '../model/plain-text.js';
import { type PoolInput, poolInput } from '../model/pool-input.js';
import { isEmailAddress, poolName } from '../model/pool-schema.js';
import { DEFAULTS } from './defaults.js';
import { durationMs } from './duration.js';

/**
 * The configuration schema. Every object is strict: an unknown key is an error that names it.
 * Defaults come from `defaults.ts`. Cross-field rules live in `load.ts` (`crossCheck`).
 */

const listen = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be "host:port"');
const tls = z.strictObject({ cert_file: z.string().min(1), key_file: z.string().min(1) });
const accountId = z.string().regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex characters');
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD (UTC)');

/** An IPv4 or IPv6 range, `address/prefix`, or one address (model/ip-address.ts). */
const cidr = z.string().superRefine((text, ctx) => {
  const parsed = parseCidr(text);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
});

/** `gateway.rate_limit`: within the sane bounds of model/limit-bounds.ts (an error names the range). */
const rateLimit = rateLimitInput;

/** WebSocket clients of the gateway listener (SPEC §10, docs/websocket.md). */
const websocket = z.strictObject({
  /** WebSocket connections per client (API key, else remote address) at once. */
  max_connections_per_client: z.number().int().min(1).default(DEFAULTS.gateway.websocket.max_connections_per_client),
  /** Subscriptions one connection may hold at once; more are answered -32005. */
  max_subscriptions_per_connection: z
    .number()
    .int()
    .min(1)
    .default(DEFAULTS.gateway.websocket.max_subscriptions_per_connection),
  /** Bytes queued for a client that does not read; beyond it the connection closes with 1008. */
  max_pending_bytes: z.number().int().min(1).default(DEFAULTS.gateway.websocket.max_pending_bytes),
  /** Ping every this long; a connection whose pong does not come within `pong_timeout` is closed. */
  ping_interval: durationMs
    .prefault(DEFAULTS.gateway.websocket.ping_interval / 1000)
    .refine((ms) => ms >= 1, 'must be at least 1 ms'),
  pong_timeout: durationMs
    .prefault(DEFAULTS.gateway.websocket.pong_timeout / 1000)
    .refine((ms) => ms >= 1, 'must be at least 1 ms'),
  /** Pings a client may send per second; more close the connection with 1008. */
  max_pings_per_second: z.number().int().min(1).default(DEFAULTS.gateway.websocket.max_pings_per_second),
  /** Addresses one log filter may list (eth_subscribe logs, eth_newFilter, eth_getLogs; HTTP too). */
  max_filter_addresses: z.number().int().min(1).default(DEFAULTS.gateway.websocket.max_filter_addresses),
  /** Values one topics position of a log filter may list (of at most 4 positions). */
  max_filter_topics: z.number().int().min(1).default(DEFAULTS.gateway.websocket.max_filter_topics),
});

const gateway = z.strictObject({
  listen: listen.default(DEFAULTS.gateway.listen),
  tls: tls.optional(),
  max_body_bytes: z.number().int().positive().default(DEFAULTS.gateway.max_body_bytes),
  max_batch: z.number().int().positive().default(DEFAULTS.gateway.max_batch),
  request_timeout: durationMs.prefault(DEFAULTS.gateway.request_timeout / 1000),
  max_attempts: z.number().int().min(1).max(10).default(DEFAULTS.gateway.max_attempts),
  connections_per_origin: z.number().int().min(1).default(DEFAULTS.gateway.connections_per_origin),
  cache_max_bytes: z.number().int().nonnegative().default(DEFAULTS.gateway.cache_max_bytes),
  /** A streamed answer whose client wrote nothing for this long is cut (its origin connection freed). */
  stream_stall_timeout: durationMs
    .prefault(DEFAULTS.gateway.stream_stall_timeout / 1000)
    .refine((ms) => ms >= 1, 'must be at least 1 ms'),
  /** Streamed answers per client (API key, else remote address) at once; more wait (gateway.md). */
  max_streams_per_client: z.number().int().min(1).default(DEFAULTS.gateway.max_streams_per_client),
  /** Client connections the listener keeps open at once (lowered at start to fit the fd limit). */
  max_connections: z.number().int().min(1).default(DEFAULTS.gateway.max_connections),
  /** Client connections per remote address at once. */
  max_connections_per_client: z.number().int().min(1).default(DEFAULTS.gateway.max_connections_per_client),
  /** When set, every gateway call needs `Authorization: Bearer <key>` or `?key=` with one of these. */
  api_keys: z.array(z.string().min(16)).optional(),
  /** When true, calls without a key (static or a gateway key) get 401 (SPEC §11). */
  require_key: z.boolean().default(DEFAULTS.gateway.require_key),
  /** Per-client (API key, else remote address) token bucket. */
  rate_limit: rateLimit.optional(),
  /**
   * Proxies (CIDR ranges or single addresses) whose Forwarded / X-Forwarded-For name the client; from
   * any other peer those headers are ignored (gateway/http/client-address.ts).
   */
  trusted_proxies: z.array(cidr).default([...DEFAULTS.gateway.trusted_proxies]),
  /** Share of calls that `dynamic_latency` steering sends to another origin than the best, to notice a recovery. */
  steering_exploration: z.number().min(0).max(0.5).default(DEFAULTS.gateway.steering_exploration),
  /** After a client's eth_sendRawTransaction, its pending-state reads go first to the origin that took it. */
  sticky_after_write: durationMs.prefault(DEFAULTS.gateway.sticky_after_write / 1000),
  websocket: websocket.prefault({}),
  /**
   * Processes serving the gateway listener (SPEC §11): 1 = this process; N > 1 = N workers fed by this
   * (control) process; `auto` = os.availableParallelism(). Always a number after parsing.
   */
  workers: z
    .union([z.number().int().min(1).max(256), z.literal('auto')])
    .default(DEFAULTS.gateway.workers)
    .transform((value) => (value === 'auto' ? availableParallelism() : value)),
  /** One log line per request: `off`, `errors` (status ≥ 400 or a gateway error in the answer) or `all`. */
  access_log: z.enum(['off', 'errors', 'all']).default(DEFAULTS.gateway.access_log),
});

/** A method name, or a `namespace_*` pattern (allow_methods, deny_methods, methods). */
const methodPattern = z.string().regex(/^[A-Za-z0-9_]+\*?$/, 'a method name or a "namespace_*" pattern');

/**
 * Hedging (SPEC §17, docs/routing.md): a read with no answer after `after` — the origin's p90 latency
 * ("p90"), or a duration — is also sent to the next origin of its plan; `max` such extra requests per call.
 */
const hedge = z.strictObject({
  after: z.union([z.literal('p90'), durationMs.refine((ms) => ms >= 1, 'must be at least 1 ms')]),
  max: z.number().int().min(1).max(3).default(DEFAULTS.network.hedge_max),
});

/** How much of an answer is proven before it is passed on (SPEC §18, docs/verification.md). */
const verifyMode = z.enum(['off', 'integrity', 'proofs']);

/**
 * Per-method rules (SPEC §17): override the gateway's timeout and max_attempts and the network's hedge;
 * `verify` the network's verification mode (SPEC §18).
 */
const methodRules = z.strictObject({
  timeout: durationMs.refine((ms) => ms >= 1, 'must be at least 1 ms').optional(),
  max_attempts: z.number().int().min(1).max(10).optional(),
  hedge: z.union([z.literal('off'), hedge]).optional(),
  verify: verifyMode.optional(),
});

/**
 * eth_getLogs over wide ranges (SPEC §17, docs/routing.md): a range wider than `chunk` blocks is asked in
 * chunks, `concurrency` at once, across the network's origins, and merged.
 */
const logsSplit = z.strictObject({
  chunk: z.number().int().min(1).max(1_000_000).default(DEFAULTS.network.logs_split.chunk),
  concurrency: z.number().int().min(1).max(32).default(DEFAULTS.network.logs_split.concurrency),
});

const api = z.strictObject({
  listen: listen.default(DEFAULTS.api.listen),
  tls: tls.optional(),
  max_body_bytes: z.number().int().positive().default(DEFAULTS.api.max_body_bytes),
  console: z.boolean().default(DEFAULTS.api.console),
});

/**
 * The transaction ledger (SPEC §19, docs/ledger.md): top level, and per network under
 * `networks.{name}.ledger` (any key; the rest comes from the top level).
 */
const ledgerFields = {
  enabled: z.boolean(),
  /** How long the signed bytes are kept (rebroadcast needs them). */
  keep_raw: durationMs,
  /** How long every healthy origin must answer null before a transaction is dropped. */
  dropped_after: durationMs.refine((ms) => ms >= 100, 'must be at least 100 ms'),
  rebroadcast: z.boolean(),
  max_rebroadcasts: z.number().int().min(0).max(100),
  max_pending: z.number().int().min(1).max(10_000_000),
  retention: durationMs.refine((ms) => ms === 0 || ms >= 3_600_000, 'must be at least 1h, or 0 to keep everything'),
};
const ledger = z.strictObject({
  enabled: ledgerFields.enabled.default(DEFAULTS.ledger.enabled),
  keep_raw: ledgerFields.keep_raw.prefault(DEFAULTS.ledger.keep_raw / 1000),
  dropped_after: ledgerFields.dropped_after.prefault(DEFAULTS.ledger.dropped_after / 1000),
  rebroadcast: ledgerFields.rebroadcast.default(DEFAULTS.ledger.rebroadcast),
  max_rebroadcasts: ledgerFields.max_rebroadcasts.default(DEFAULTS.ledger.max_rebroadcasts),
  max_pending: ledgerFields.max_pending.default(DEFAULTS.ledger.max_pending),
  retention: ledgerFields.retention.prefault(DEFAULTS.ledger.retention / 1000),
});
const networkLedger = z.strictObject({
  enabled: ledgerFields.enabled.optional(),
  keep_raw: ledgerFields.keep_raw.optional(),
  dropped_after: ledgerFields.dropped_after.optional(),
  rebroadcast: ledgerFields.rebroadcast.optional(),
  max_rebroadcasts: ledgerFields.max_rebroadcasts.optional(),
  max_pending: ledgerFields.max_pending.optional(),
  retention: ledgerFields.retention.optional(),
});

export const networkName = z.string().regex(/^[a-z0-9-]{1,64}$/, 'network names are lowercase letters, digits and "-"');

export const networkSchema = z
  .strictObject({
    chain_id: z.number().int().positive(),
    pools: z.array(poolName).default([]),
    retired_on: isoDate.optional(),
    replacement: z.string().optional(),
    /** Extra methods or namespaces allowed on this network, e.g. ["debug_*", "txpool_content"]. */
    allow_methods: z.array(methodPattern).default([]),
    /** Methods refused on this network even though the standard policy allows them. */
    deny_methods: z.array(methodPattern).default([]),
    /** How often the chain tracker asks each origin for its head. */
    head_poll_interval: durationMs
      .prefault(DEFAULTS.network.head_poll_interval / 1000)
      .refine((ms) => ms >= 10, 'must be at least 10 ms'),
    /** Blocks behind the network head an origin may be and still take head-relative calls. */
    max_head_lag: z.number().int().nonnegative().default(DEFAULTS.network.max_head_lag),
    /** Widest eth_getLogs / eth_newFilter block range; null = no limit; unset: by `logs_split` (withLogsRangeDefault). */
    max_logs_block_range: z.number().int().positive().nullable().optional(),
    /** Blocks below the head taken as final where an origin has no `finalized` tag (incident divergence). */
    finality_depth: z.number().int().nonnegative().default(DEFAULTS.network.finality_depth),
    /** The operator's own origins, trusted on their word (SPEC §18's trust anchor; §20's head adoption). */
    verify_anchor: z
      .strictObject({
        /** `pool/origin`, or a bare origin name unique in the network (chain/anchor.ts). */
        origins: z.array(plainText().min(1).max(201)).default([]),
        /** Pools whose origins must report the same hash before a block is trusted (chain/trust.ts); never 1. */
        quorum: z.number().int().min(2).max(16).default(DEFAULTS.network.verify_anchor.quorum),
        /** An origin's integrity alert ends after this long without a verification failure. */
        clear_after: durationMs
          .prefault(DEFAULTS.network.verify_anchor.clear_after / 1000)
          .refine((ms) => ms >= 1000, 'must be at least 1 s'),
      })
      .prefault({}),
    /** Answers proven before they are passed on (SPEC §18): off, integrity (hashes and roots) or proofs. */
    verify: verifyMode.default(DEFAULTS.network.verify),
    /** Chain-incident alert thresholds (SPEC §14, docs/incidents.md); durations left out are derived from the chain. */
    incidents: z
      .strictObject({
        /** A head that has not advanced this long is a stall; default 10 × the median block interval, ≥ 10 s. */
        head_stall_after: durationMs.refine((ms) => ms >= 100, 'must be at least 100 ms').optional(),
        /** A finalized block that has not advanced this long; default 3 × its median advance, ≥ head_stall_after. */
        finality_stall_after: durationMs.refine((ms) => ms >= 100, 'must be at least 100 ms').optional(),
        /** The fewest replaced blocks a reorg alert is raised for. */
        reorg_min_depth: z.number().int().min(1).default(DEFAULTS.network.incidents.reorg_min_depth),
      })
      .prefault({}),
    /** Order of the network's pools: `off` = as listed (failover); `dynamic_latency` = by their best origin score. */
    steering: z.enum(['off', 'dynamic_latency']).default(DEFAULTS.network.steering),
    /** Hedged reads (docs/routing.md); absent: off. */
    hedge: hedge.optional(),
    /** Rules per method name or `namespace_*` pattern (an exact name wins over a pattern). */
    methods: z.record(methodPattern, methodRules).default({}),
    /** eth_getLogs over wide ranges in chunks (docs/routing.md); absent: off (the range guard answers). */
    logs_split: logsSplit.optional(),
    /** eth_sendRawTransaction to `one` origin (the failsafe plan) or to `all` healthy origins of the network. */
    send_transactions: z.enum(['one', 'all']).default(DEFAULTS.network.send_transactions),
    /** This network's ledger settings; keys left out come from the top-level `ledger` (schema transform). */
    ledger: networkLedger.prefault({}),
  })
  .transform(withLogsRangeDefault);

/**
 * `max_logs_block_range` left out: 1 000 000 blocks when `logs_split` is on (a split query may be wide),
 * else 10 000. The defaults table has both.
 */
function withLogsRangeDefault<N extends { max_logs_block_range?: number | null | undefined; logs_split?: object }>(
  network: N,
): N & { max_logs_block_range: number | null } {
  if (network.max_logs_block_range !== undefined) return network as N & { max_logs_block_range: number | null };
  const limit =
    network.logs_split === undefined
      ? DEFAULTS.network.max_logs_block_range
      : DEFAULTS.network.max_logs_block_range_split;
  return { ...network, max_logs_block_range: limit };
}

const devnet = z.strictObject({
  enabled: z.boolean().default(false),
  network: z.string().default('sepolia'),
  pool: poolName.default('sepolia-devnet'),
  chain_id: z.number().int().positive().default(DEFAULTS.devnet.chain_id),
  /** Unset: DEFAULTS.devnet.base_port, or free ports when those are taken (devnet/devnet.ts). */
  base_port: z.number().int().min(0).max(65535).optional(),
  nodes: z.number().int().min(1).max(8).default(DEFAULTS.devnet.nodes),
  block_time: z.number().nonnegative().default(DEFAULTS.devnet.block_time),
  /** The demo alert policy (devnet/alert-policy.ts) emails this address; "" creates no policy. */
  alert_email: z
    .string()
    .refine((value) => value === '' || isEmailAddress(value), 'must be an email address, or "" for no alert policy')
    .default(DEFAULTS.devnet.alert_email),
});

/** The top-level keys; `configSchema` adds the defaults that depend on another key. */
export const configObject = z.strictObject({
  data_dir: z.string().min(1).default(DEFAULTS.data_dir),
  database_url: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL; leave it out for the embedded SQLite store')
    .optional(),
  /**
   * The key that seals secrets in the store (SPEC §16; secrets/key-source.ts): unset means
   * `<data_dir>/secrets.key`, created on first start; SWITCHYARD_SECRETS_KEY wins over it.
   */
  secrets_key_file: z.string().min(1).optional(),
  /** Redis shared by every instance for global rate limits, key quotas and revocation (SPEC §11). */
  redis_url: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL; leave it out for limits local to this instance')
    .optional(),
  gateway: gateway.default(gateway.parse({})),
  api: api.default(api.parse({})),
  account_id: accountId.default(DEFAULTS.account_id),
  smtp_url: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** Allow SMTP AUTH without TLS (smtp:// to a server offering no STARTTLS); off: credentials need TLS. */
  smtp_allow_insecure_auth: z.boolean().default(DEFAULTS.smtp_allow_insecure_auth),
  mail_from: z.string().min(3).default(DEFAULTS.mail_from),
  deprecation_notice_interval: durationMs.prefault(DEFAULTS.deprecation_notice_interval / 1000),
  notification_retention: durationMs
    .prefault(DEFAULTS.notification_retention / 1000)
    .refine((ms) => ms === 0 || ms >= 86_400_000, 'must be at least 1d, or 0 to keep everything'),
  webhooks: z
    .strictObject({
      deny_private: z.boolean().default(DEFAULTS.webhooks.deny_private),
      timeout: durationMs.prefault(DEFAULTS.webhooks.timeout / 1000),
    })
    .default({ deny_private: DEFAULTS.webhooks.deny_private, timeout: DEFAULTS.webhooks.timeout }),
  outbound: z
    .strictObject({
      /** Accounts whose origins, monitors and webhooks may reach loopback, private and CGNAT targets. */
      trusted_accounts: z.array(accountId).optional(),
    })
    .default({}),
  /** Per-account limits on what the API accepts (accounts/limits.ts); config pools are checked on load. */
  limits: z
    .strictObject({
      probes_per_second: z.number().positive().default(DEFAULTS.limits.probes_per_second),
      max_pools_per_account: z.number().int().positive().default(DEFAULTS.limits.max_pools_per_account),
      max_origins_per_pool: z.number().int().positive().default(DEFAULTS.limits.max_origins_per_pool),
    })
    .prefault({}),
  ledger: ledger.prefault({}),
  log_level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default(DEFAULTS.log_level),
  /** `json` lines, or `pretty` one-line text for terminals; unset: pretty when stderr is a terminal (log.ts). */
  log_format: z.enum(['json', 'pretty']).optional(),
  shutdown_grace: durationMs.prefault(DEFAULTS.shutdown_grace / 1000),
  networks: z.record(networkName, networkSchema).default({}),
  pools: z.array(poolInput).default([]),
  /**
   * `seed`: a pool of `pools:` is created once and the store's copy wins afterwards; `apply`: the file's
   * pools are applied at every start (pools/from-file.ts), overwriting API edits of them.
   */
  pools_from_file: z.enum(['seed', 'apply']).default(DEFAULTS.pools_from_file),
  devnet: devnet.optional(),
});

/**
 * The defaults that depend on another key: outbound.trusted_accounts defaults to [account_id]; each key a
 * network's `ledger` leaves out is the top-level ledger's.
 */
export function withDerivedDefaults(config: z.output<typeof configObject>) {
  return {
    ...config,
    outbound: { trusted_accounts: config.outbound.trusted_accounts ?? [config.account_id] },
    networks: Object.fromEntries(
      Object.entries(config.networks).map(([name, network]) => [
        name,
        { ...network, ledger: { ...config.ledger, ...definedOnly(network.ledger) } },
      ]),
    ),
  };
}

/** The whole schema: the keys above, then the defaults that depend on another key. */
export const configSchema = configObject.transform(withDerivedDefaults);

/** The object without its undefined members (a key left out must not hide the top-level value). */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export type Config = z.output<typeof configSchema>;
export type NetworkConfig = Config['networks'][string];
/** A pool as config declares it (model/pool-input.ts); the name config/, devnet/ and seeding use. */
export type PoolConfig = PoolInput;
export type DevnetConfig = NonNullable<Config['devnet']>;
/** One network's ledger settings, the top level's merged with its own (SPEC §19). */
export type LedgerSettings = Config['ledger'];
