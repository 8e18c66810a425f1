/**
 * Every configuration default, in one table, with its unit. The schema (`schema.ts`) reads its
 * defaults from here and nowhere else; `docs/configuration.md` mirrors this table.
 */
export const DEFAULTS = {
  data_dir: './data',
  // secrets_key_file: <data_dir>/secrets.key — it depends on data_dir, so secrets/key-source.ts fills it in.
  gateway: {
    listen: '127.0.0.1:8545',
    max_body_bytes: 1_048_576, // bytes (1 MiB)
    max_batch: 100, // elements per batch
    request_timeout: 10_000, // ms, per upstream attempt
    max_attempts: 3, // origins tried per idempotent read before the client sees an error
    connections_per_origin: 64, // keep-alive sockets per origin
    cache_max_bytes: 64 * 1_048_576, // bytes of cached immutable answers (LRU); 0 disables the cache
    stream_stall_timeout: 30_000, // ms a streamed answer may go without the client reading before it is cut
    max_streams_per_client: 4, // streamed (large) answers per client at once; more wait for a slot
    max_connections: 10_000, // client connections at once (lowered at start to fit RLIMIT_NOFILE)
    max_connections_per_client: 256, // client connections per remote address at once
    trusted_proxies: [] as string[], // CIDR ranges whose Forwarded / X-Forwarded-For name the client; none: the TCP peer is the client
    sticky_after_write: 60_000, // ms a client's pending-state reads go first to the origin that took its transaction
    require_key: false, // true: a call without a key (gateway.api_keys or a gateway key) gets 401
    steering_exploration: 0.05, // share of calls dynamic_latency steering sends to another origin than the best
    workers: 1, // processes serving the gateway listener; > 1: node:cluster workers fed by the control process
    access_log: 'errors', // one line per request: off, errors (status ≥ 400 or a gateway error) or all
    websocket: {
      max_connections_per_client: 64, // WebSocket connections per client (API key, else remote address)
      max_subscriptions_per_connection: 100, // eth_subscribe subscriptions one connection holds at once
      max_pending_bytes: 16 * 1_048_576, // bytes queued for a client that does not read (16 MiB); beyond: close 1008
      ping_interval: 30_000, // ms between pings of each WebSocket connection
      pong_timeout: 30_000, // ms a pong may take before the connection is closed
      max_pings_per_second: 10, // pings a client may send per second; more: close 1008
      max_filter_addresses: 1_000, // addresses per log filter (subscriptions, eth_newFilter, eth_getLogs)
      max_filter_topics: 100, // values per topics position of a log filter (4 positions at most)
    },
  },
  network: {
    head_poll_interval: 1_000, // ms between head polls of each origin (chain tracker)
    max_head_lag: 0, // blocks an origin may be behind the network head and still take head-relative calls
    max_logs_block_range: 10_000, // blocks one eth_getLogs / eth_newFilter may span; null = no limit
    max_logs_block_range_split: 1_000_000, // the same, when logs_split is on and max_logs_block_range is not set
    logs_split: { chunk: 2_000, concurrency: 4 }, // blocks per eth_getLogs chunk, chunks at once (when logs_split is given)
    send_transactions: 'one' as 'one' | 'all', // eth_sendRawTransaction to one origin (failsafe plan) or every healthy origin
    finality_depth: 64, // blocks below the head taken as final where an origin has no finalized tag
    steering: 'off' as 'off' | 'dynamic_latency', // pools in failover order; dynamic_latency: by best origin score
    hedge_max: 1, // extra requests a hedged read may send (networks.{name}.hedge.max); hedging itself is off by default
    verify: 'off' as 'off' | 'integrity' | 'proofs', // answers passed on unproven; integrity / proofs: docs/verification.md
    verify_anchor: {
      quorum: 2, // pools whose origins must report the same block hash before it is trusted (never fewer than 2)
      clear_after: 600_000, // ms without a verification failure after which an origin's integrity alert ends
    },
    incidents: {
      reorg_min_depth: 2, // fewest replaced blocks that raise switchyard_reorg_alert
      // head_stall_after / finality_stall_after: derived from the chain when unset (incidents/thresholds.ts)
    },
  },
  api: {
    listen: '127.0.0.1:8787',
    max_body_bytes: 1_048_576, // bytes
    console: true, // the operator console at /console/ on this listener (SPEC §13)
  },
  account_id: '5317c4a1d00d5317c4a1d00d5317c4a1', // the embedded demo account
  smtp_allow_insecure_auth: false, // true lets smtp_url credentials go out without TLS
  mail_from: 'Switchyard <switchyard@localhost>',
  deprecation_notice_interval: 86_400_000, // ms (24 h)
  notification_retention: 30 * 86_400_000, // ms (30 days) of sent/dead alerts, history and dispatched events; 0 = keep all
  // outbound.trusted_accounts: [account_id] (the routing account) — it depends on account_id, so the
  // schema's final transform fills it in (schema.ts).
  webhooks: { deny_private: false, timeout: 10_000 /* ms */ },
  ledger: {
    enabled: true, // record and follow every accepted eth_sendRawTransaction (docs/ledger.md)
    keep_raw: 7 * 86_400_000, // ms (7 days) the signed bytes are kept for rebroadcast
    dropped_after: 600_000, // ms (10 min) absent from every healthy origin before a transaction is dropped
    rebroadcast: false, // true: send a would-be-dropped transaction again before declaring it dropped
    max_rebroadcasts: 3, // rebroadcasts per transaction at most
    max_pending: 100_000, // pending transactions followed per network and instance; the oldest leave first
    retention: 30 * 86_400_000, // ms (30 days) a record is kept after its last change; 0 = keep all
  },
  limits: {
    probes_per_second: 50, // monitor requests per second per account: Σ origins × (retries + 1) ÷ interval
    max_pools_per_account: 1000,
    max_origins_per_pool: 64,
  },
  log_level: 'info',
  // log_format: unset = json, or pretty when stderr is a terminal (log.ts `logFormatFor`)
  pools_from_file: 'seed', // 'seed': config pools are created once; 'apply': applied at every start
  shutdown_grace: 10_000, // ms to finish in-flight requests on SIGTERM
  health: {
    passive_ejection: 10_000, // ms an origin of a pool WITHOUT a monitor stays out after a live-traffic failure
    refresh_interval: 1_000, // ms between re-reads of the shared health state (checks by other processes)
    unmonitored_interval: 10_000, // ms between state rounds of pools without a monitor (no probes)
    confirm_delay: 1_000, // ms after a live-traffic ejection before the first confirmation probe (doubles, ≤ 60 s)
  },
  devnet: {
    chain_id: 11_155_111, // sepolia's chain id, so clients configured for sepolia work unchanged
    base_port: 9545, // anvil nodes listen on base_port, base_port+1, …; unset and taken: free ports instead
    nodes: 2,
    block_time: 0, // seconds; 0 = mine on each transaction
    alert_email: 'operator@localhost', // the demo alert policy's address; "" = no policy
  },
} as const;

/** The built-in offline demo config used when `serve` gets no `--config`. */
export const OFFLINE_DEFAULT_CONFIG = {
  devnet: { enabled: true, network: 'sepolia', pool: 'sepolia-devnet' },
  networks: {
    sepolia: { chain_id: 11_155_111, pools: ['sepolia-devnet'] },
    rinkeby: { chain_id: 4, pools: [], retired_on: '2023-01-30', replacement: 'sepolia' },
  },
} as const;
