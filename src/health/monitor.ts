/**
 * The health monitor of one `serve` process: schedules a round per enabled pool (see round.ts) at its
 * monitor's `interval` (pools without a monitor every `health.unmonitored_interval`, 10 s, and right after
 * they change), keeps this process's live copy of the shared state fresh (every `health.refresh_interval`,
 * 1 s), and exposes it as the gateway's HealthView (`view`) and the API's live health (`report`, `healthy`).
 *
 * Several processes on one PostgreSQL: each pool's rounds run in the process holding the pool's lease
 * (`pool_health.lease_owner/lease_until`, taken or renewed at the start of each round, lasting
 * 2 × interval + the longest possible check + 5 s). The others only read; when the holder stops cleanly it
 * releases its leases, when it dies its leases run out and another process takes over.
 *
 * Chain ids for jsonrpc monitors: a pool of the routing account (`account_id`) listed in `networks.*.pools`
 * must report the chain id of each such network; a pool in no network is checked without a chain id.
 *
 * Live-traffic ejections (view.ts) of origins in monitored pools get early confirmation probes
 * (confirmation.ts, first after `health.confirm_delay`, 1 s), so a blip does not cost a whole interval.
 * `onEvents` hears about the events this process recorded right after they commit (the notification
 * service uses it to send alerts at once instead of at its next poll). `onBlockNumber` hears each block
 * number a jsonrpc probe saw (the chain tracker takes it as what a probe reveals of the origin's head);
 * `adoptedHead` reads back the network head the tracker adopted, the highest best `max_block_lag` is
 * judged against (SPEC §20); `onProbe` hears each check's result (the origin scores take its latency and
 * outcome, SPEC §17).
 *
 * `runOnce()` runs a round of every enabled pool now and waits for it, and `confirmEjections()` runs the
 * pending confirmation probes now — tests drive the monitor with them and an injected clock instead of
 * waiting on intervals.
 */
import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../clock.js';
import { DEFAULTS } from '../config/defaults.js';
import { type Logger, silentLogger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { MonitorSettings } from '../model/monitor-schema.js';
import type { Origin, Pool, PoolDirectory } from '../model/pool.js';
import type { OutboundPolicy } from '../outbound/policy.js';
import type { Store } from '../store/database.js';
import type { Opener } from '../store/store-secrets.js';
import { EjectionConfirmer } from './confirmation.js';
import type { HealthEventInput } from './events.js';
import { LiveState } from './live-state.js';
import { type MonitorSource, monitorSourceOf } from './monitor-source.js';
import { registerOriginGauges } from './origin-healthy.js';
import type { ProbeResult } from './probes/result.js';
import { ProbeTransport } from './probes/transport.js';
import {
  type OriginStateLookup,
  type PoolHealthReport,
  poolHealthReport,
  originHealthy as reportOriginHealthy,
  poolHealthy as reportPoolHealthy,
} from './report.js';
import { type PoolPlan, type RoundContext, type RoundOutcome, runPoolRound } from './round.js';
import { JitteredScheduler } from './scheduler.js';
import {
  deletePoolHealth,
  loadOriginHealth,
  loadOriginHealthNotLeasedBy,
  loadPoolHealth,
  releasePoolLeases,
} from './state-queries.js';
import { MonitoredHealthView } from './view.js';

export interface NetworkChains {
  readonly [network: string]: { readonly chain_id: number; readonly pools: readonly string[] };
}

export interface HealthMonitorOptions {
  store: Store;
  /** Opens monitors' sealed secret headers: needed by the default monitor source (from the store). */
  secrets?: Opener;
  directory: PoolDirectory;
  /** The account the gateway routes for; the networks' pool names refer to its pools. */
  routingAccountId: string;
  networks: NetworkChains;
  monitors?: MonitorSource;
  clock?: Clock;
  logger?: Logger;
  metrics?: MetricsRegistry;
  random?: () => number;
  passiveEjectionMs?: number;
  /** Delay of the first confirmation probe after a live-traffic ejection (default health.confirm_delay). */
  confirmDelayMs?: number;
  refreshIntervalMs?: number;
  unmonitoredIntervalMs?: number;
  /** Called with the events this process recorded, after their transaction committed. */
  onEvents?: (events: readonly HealthEventInput[]) => void;
  /** Called with the head a jsonrpc probe saw on an origin (eth_blockNumber), after its round committed. */
  onBlockNumber?: (poolId: string, originName: string, blockNumber: number) => void;
  /** The network head the chain tracker adopted (round.ts `RoundContext.adoptedHead`). */
  adoptedHead?: (network: string) => number | undefined;
  /** Called with each committed check's result, after its round committed. */
  onProbe?: (poolId: string, originName: string, result: ProbeResult) => void;
  /** The outbound target policy probes follow: the one built from the config (main.ts). */
  outbound: OutboundPolicy;
}

export class HealthMonitor {
  readonly view: MonitoredHealthView;
  readonly live = new LiveState();
  readonly owner = randomUUID();
  #options: HealthMonitorOptions;
  #clock: Clock;
  #logger: Logger;
  #monitors: MonitorSource;
  #transport: ProbeTransport;
  #scheduler: JitteredScheduler;
  #confirmer: EjectionConfirmer;
  #confirmProbe: (passed: boolean) => void = () => {};
  #inFlight = new Map<string, Promise<RoundOutcome>>();
  #seen = new Map<string, string>();
  #unsubscribe: (() => void) | undefined;
  #refreshTimer: NodeJS.Timeout | undefined;
  #ctx: RoundContext;
  #stopped = false;

  constructor(options: HealthMonitorOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#transport = new ProbeTransport({ outbound: options.outbound, clock: this.#clock });
    this.#logger = options.logger ?? silentLogger;
    this.#monitors = monitorSourceOf(options.store, options.secrets, options.monitors);
    this.#scheduler = new JitteredScheduler({
      ...(options.random === undefined ? {} : { random: options.random }),
      onError: (poolId, err) => this.#logger.error('health round failed', { pool_id: poolId, err }),
    });
    this.view = new MonitoredHealthView({
      directory: options.directory,
      live: this.live,
      clock: this.#clock,
      passiveEjectionMs: options.passiveEjectionMs ?? DEFAULTS.health.passive_ejection,
      onEject: (poolId, originName) => this.#ejected(poolId, originName),
    });
    this.#confirmer = new EjectionConfirmer({
      view: this.view,
      directory: options.directory,
      transport: this.#transport,
      clock: this.#clock,
      logger: this.#logger,
      plan: (pool) => this.#plan(pool),
      baseDelayMs: options.confirmDelayMs ?? DEFAULTS.health.confirm_delay,
      onProbe: (passed) => this.#confirmProbe(passed),
    });
    this.#ctx = {
      store: options.store,
      transport: this.#transport,
      clock: this.#clock,
      owner: this.owner,
      live: this.live,
      logger: this.#logger,
      ...(options.onEvents === undefined ? {} : { onEvents: options.onEvents }),
      ...(options.onBlockNumber === undefined
        ? {}
        : {
            onBlockNumber: options.onBlockNumber,
          }),
      ...(options.adoptedHead === undefined ? {} : { adoptedHead: options.adoptedHead }),
      ...(options.onProbe === undefined ? {} : { onProbe: options.onProbe }),
    };
    if (options.metrics !== undefined) this.#registerMetrics(options.metrics);
  }

  /** Starts the scheduled rounds and the state refresh. */
  async start(): Promise<void> {
    await this.refresh();
    this.#unsubscribe = this.#options.directory.onChange(() => this.#sync());
    this.#sync();
    const every = this.#options.refreshIntervalMs ?? DEFAULTS.health.refresh_interval;
    const tick = () => {
      this.refresh()
        .catch((err: unknown) => this.#logger.warn('health state refresh failed', { err }))
        .finally(() => {
          if (!this.#stopped) this.#refreshTimer = setTimeout(tick, every).unref();
        });
    };
    this.#refreshTimer = setTimeout(tick, every).unref();
  }

  /** Stops scheduling, waits for running rounds, gives up this process's leases. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#refreshTimer);
    await this.#scheduler.stop();
    await this.#confirmer.stop();
    await Promise.allSettled([...this.#inFlight.values()]);
    this.view.close();
    try {
      await releasePoolLeases(this.#options.store.db, this.owner);
    } catch (err) {
      this.#logger.warn('could not release health leases', { err });
    }
    await this.#transport.close();
  }

  /** One round of every enabled pool, now; resolves with the events recorded by this process. */
  async runOnce(): Promise<HealthEventInput[]> {
    const pools = this.#options.directory.allPools().filter((pool) => pool.enabled);
    const outcomes = await Promise.all(pools.map((pool) => this.checkPool(pool.id)));
    return outcomes.flatMap((outcome) => (outcome?.kind === 'checked' ? outcome.events : []));
  }

  /** Runs every pending confirmation probe now and waits for them (tests; normally timers do). */
  confirmEjections(): Promise<void> {
    return this.#confirmer.runDue();
  }

  /**
   * One round of one pool; rounds of the same pool never overlap (a second call waits and runs after).
   * `plan`: one just made for this pool (the scheduled task has read the monitor already); used only if
   * the pool is still the same object when the round starts.
   */
  async checkPool(poolId: string, plan?: PoolPlan): Promise<RoundOutcome | undefined> {
    const previous = this.#inFlight.get(poolId) ?? Promise.resolve(undefined);
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const pool = this.#options.directory.poolById(poolId);
        if (pool === undefined || !pool.enabled) return undefined;
        return runPoolRound(this.#ctx, plan?.pool === pool ? plan : await this.#plan(pool));
      });
    // The queue entry only orders rounds; this call's caller gets the round's failure (`await next`). So
    // the entry settles either way: a rejection that no later round awaits would be unhandled.
    const tracked = next.then(
      (outcome) => outcome ?? { kind: 'standby' as const },
      () => ({ kind: 'standby' as const }),
    );
    this.#inFlight.set(poolId, tracked);
    try {
      return await next;
    } finally {
      if (this.#inFlight.get(poolId) === tracked) this.#inFlight.delete(poolId);
    }
  }

  /** What a round of this monitor runs with (tests drive `runPoolRound` directly with it). */
  roundContext(): RoundContext {
    return { ...this.#ctx };
  }

  /**
   * Re-reads the shared state (what other processes checked) into the live copy. The origin rows of
   * pools whose lease this process holds are not read: it wrote them itself (with 10,000 origins that
   * was 10,000 rows a second read back for nothing). The pool rows come first: a pool leased to this
   * process in between was `claim`ed after `mark` and is left alone.
   */
  async refresh(): Promise<void> {
    const mark = this.live.mark();
    const db = this.#options.store.db;
    const pools = await loadPoolHealth(db);
    const own = new Set<string>();
    for (const row of pools) if (row.lease_owner === this.owner) own.add(row.pool_id);
    const origins = await loadOriginHealthNotLeasedBy(db, this.owner);
    this.live.replace(origins, pools, mark, undefined, own);
  }

  /**
   * `GET …/pools/{id}/health` from this process's live copy (this process's checks at once, other
   * processes' within `health.refresh_interval`). Fits the API's PoolHealthSource.
   */
  report(pool: Pool): PoolHealthReport {
    return poolHealthReport(pool, this.#lookup);
  }

  /** The same report read from the store, exact across processes. */
  async reportFromStore(pool: Pool): Promise<PoolHealthReport> {
    const rows = await loadOriginHealth(this.#options.store.db, [pool.id]);
    const byName = new Map(rows.map((row) => [row.origin_name, row]));
    return poolHealthReport(pool, (_poolId, name) => byName.get(name));
  }

  /** The live `healthy` of a pool object (monitors' view, not this process's ejections). */
  poolHealthy(pool: Pool): boolean {
    return reportPoolHealthy(pool, this.#lookup);
  }

  /** The live `healthy` of an origin in a pool object. */
  originHealthy(pool: Pool, origin: Origin): boolean {
    return reportOriginHealthy(pool, origin, this.#lookup);
  }

  #ejected(poolId: string, originName: string): void {
    const pool = this.#options.directory.poolById(poolId);
    this.#logger.warn('origin taken out of rotation by live traffic', {
      pool: pool?.name,
      origin: originName,
      reason: this.view.ejected(poolId, originName),
    });
    this.#confirmer.schedule(poolId, originName);
  }

  #lookup: OriginStateLookup = (poolId, name) => this.live.origin(poolId, name);

  async #plan(pool: Pool): Promise<PoolPlan> {
    let monitor: MonitorSettings | undefined;
    if (pool.monitor !== null) {
      monitor = await this.#monitors.monitor(pool.account_id, pool.monitor);
      if (monitor === undefined) {
        this.#logger.warn('pool refers to a missing monitor; checking it as unmonitored', { pool_id: pool.id });
      }
    }
    const networks =
      pool.account_id === this.#options.routingAccountId
        ? Object.entries(this.#options.networks).filter(([, network]) => network.pools.includes(pool.name))
        : [];
    const expectedChainIds = networks.map(([, network]) => network.chain_id);
    const intervalMs = this.#intervalMs(monitor);
    const longestCheck = monitor === undefined ? 0 : (monitor.retries + 1) * 3 * monitor.timeout * 1000;
    const leaseMs = 2 * intervalMs + longestCheck + 5_000;
    return { pool, monitor, expectedChainIds, networks: networks.map(([name]) => name), leaseMs };
  }

  #intervalMs(monitor: MonitorSettings | undefined): number {
    return monitor === undefined
      ? (this.#options.unmonitoredIntervalMs ?? DEFAULTS.health.unmonitored_interval)
      : monitor.interval * 1000;
  }

  /** Aligns the schedule with the directory: new pools get a random phase, gone/disabled pools stop. */
  #sync(): void {
    if (this.#stopped) return;
    const pools = this.#options.directory.allPools();
    const current = new Set<string>();
    const forget: string[] = [];
    for (const pool of pools) {
      if (!pool.enabled) {
        if (this.live.pool(pool.id) !== undefined || this.live.origins(pool.id).size > 0) forget.push(pool.id);
        continue;
      }
      current.add(pool.id);
      const version = `${pool.modified_on}|${pool.monitor}`;
      const changed = this.#seen.get(pool.id) !== version;
      this.#seen.set(pool.id, version);
      if (!changed) continue;
      const poolId = pool.id;
      // Each run re-reads the pool and its monitor, so interval changes apply from the next run.
      const task = async (): Promise<void> => {
        const fresh = this.#options.directory.poolById(poolId);
        if (fresh === undefined || !fresh.enabled) return;
        const plan = await this.#plan(fresh);
        this.#scheduler.set(poolId, this.#intervalMs(plan.monitor), task);
        await this.checkPool(poolId, plan);
      };
      if (pool.monitor === null) {
        this.#scheduler.set(poolId, this.#intervalMs(undefined), task);
        this.checkPool(poolId).catch((err: unknown) => this.#logger.error('health round failed', { err }));
      } else {
        this.#plan(pool)
          .then((plan) => this.#scheduler.set(poolId, this.#intervalMs(plan.monitor), task))
          .catch((err: unknown) => this.#logger.error('could not schedule health checks', { err }));
      }
    }
    for (const poolId of this.#scheduler.keys()) {
      if (!current.has(poolId)) {
        this.#scheduler.delete(poolId);
        this.#seen.delete(poolId);
        if (!pools.some((pool) => pool.id === poolId)) forget.push(poolId);
      }
    }
    if (forget.length > 0) {
      deletePoolHealth(this.#options.store.db, forget)
        .then(() => {
          for (const poolId of forget) this.live.writePool(poolId, undefined, []);
        })
        .catch((err: unknown) => this.#logger.warn('could not forget health state', { err }));
    }
  }

  #registerMetrics(metrics: MetricsRegistry): void {
    const checks = metrics.counter('switchyard_health_checks_total', 'Monitor checks by monitor type and result', [
      'type',
      'result',
    ]);
    const events = metrics.counter('switchyard_health_events_total', 'Health changes recorded as events', [
      'event_source',
      'new_health',
    ]);
    const rtt = metrics.histogram('switchyard_health_check_rtt_seconds', 'Round trip of passed and failed checks', [
      'type',
    ]);
    const networks = () => this.#options.networks;
    registerOriginGauges(metrics, { networks, directory: this.#options.directory, view: this.view, live: this.live });
    this.#ctx.onCheck = (_pool, _origin, result, type) => {
      checks.inc({ type, result: result.ok ? 'pass' : result.timed_out ? 'timeout' : 'fail' });
      if (result.rtt_ms !== null) rtt.observe({ type }, result.rtt_ms / 1000);
    };
    const probes = metrics.counter(
      'switchyard_health_confirmation_probes_total',
      'Early confirmation probes after live-traffic ejections, by result',
      ['result'],
    );
    this.#confirmProbe = (passed) => probes.inc({ result: passed ? 'pass' : 'fail' });
    this.#ctx.onEvent = (event) => events.inc({ event_source: event.event_source, new_health: event.new_health });
  }
}
