/**
 * Whether the shared limits backend (Redis, or the control process for a worker) answers, for the
 * leased rate limiter and quota counter of one process, or a control process's failover to its own
 * (SPEC §11 "fail open"). The first failure of an outage logs one warning saying limits fail open
 * (`fails: "open"`) and sets `switchyard_limits_backend_up{backend}` to 0; while down, callers
 * decide locally (each counts `switchyard_limits_fallback_total{backend}` per decision) and may try
 * the backend again at most once per PROBE_INTERVAL_MS (1 s); the first success logs once and sets the
 * gauge back to 1. A call not answered within BACKEND_TIMEOUT_MS (1 s) is a failure. Shared by the limiter and the quota counter so one outage is logged once.
 */
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { MetricsRegistry } from '../../metrics/registry.js';

/** ms between attempts to reach the backend while it is down. */
export const PROBE_INTERVAL_MS = 1_000;
/** A backend call not answered within this many ms counts as a failure. */
export const BACKEND_TIMEOUT_MS = 1_000;

/**
 * Calls `expire` after `ms` — a turn late: I/O that arrived while this process was busy (the answer) is
 * read first (the poll phase runs before setImmediate's), so the process's own event-loop lag is not
 * taken for a silent backend. `clear()` cancels it.
 */
export function deadlineAfter(ms: number, expire: () => void): { clear(): void } {
  let late: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    late = setImmediate(expire);
  }, ms);
  timer.unref();
  return {
    clear: () => {
      clearTimeout(timer);
      if (late !== undefined) clearImmediate(late);
    },
  };
}

export class SharedLimitsStatus {
  readonly #backend: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #up: { set(value: number): void };
  readonly #fallback: { inc(value?: number): void };
  readonly #overrun: { inc(value?: number): void };
  #downSince: number | undefined;
  #nextProbe = 0;

  constructor(options: { backend: string; clock: Clock; logger: Logger; metrics?: MetricsRegistry | undefined }) {
    this.#backend = options.backend;
    this.#clock = options.clock;
    this.#logger = options.logger;
    const labels = { backend: options.backend };
    const up = options.metrics?.gauge(
      'switchyard_limits_backend_up',
      'Whether the shared rate-limit and quota backend answers (1) or this process limits alone (0)',
      ['backend'],
    );
    up?.set(labels, 1);
    this.#up = { set: (value) => up?.set(labels, value) };
    const fallback = options.metrics
      ?.counter(
        'switchyard_limits_fallback_total',
        'Rate-limit and quota decisions made locally because the shared backend was unreachable',
        ['backend'],
      )
      .series(labels);
    this.#fallback = { inc: (value) => fallback?.inc(value) };
    const overrun = options.metrics
      ?.counter(
        'switchyard_limits_quota_overrun_total',
        'Calls of gateway keys admitted on credit beyond their daily quota while a reserve was in flight',
        ['backend'],
      )
      .series(labels);
    this.#overrun = { inc: (value) => overrun?.inc(value) };
  }

  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** Awaits one backend call (deadline BACKEND_TIMEOUT_MS), noting success or failure; undefined = failed. */
  async settle<T>(call: Promise<T>): Promise<T | undefined> {
    let timer: { clear(): void } | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = deadlineAfter(BACKEND_TIMEOUT_MS, () => reject(new Error(`no answer within ${BACKEND_TIMEOUT_MS} ms`)));
    });
    try {
      const result = await Promise.race([call, deadline]);
      this.succeeded();
      return result;
    } catch (err) {
      this.failed(err);
      return undefined;
    } finally {
      timer?.clear();
    }
  }

  /** A call to the backend failed: the first failure of an outage is logged (once) and shown. */
  failed(err: unknown): void {
    const now = this.#clock.now();
    this.#nextProbe = now + PROBE_INTERVAL_MS;
    if (this.#downSince !== undefined) return;
    this.#downSince = now;
    this.#up.set(0);
    this.#logger.warn(
      'shared limits unreachable: failing open, rate limits and quotas are counted locally until it answers',
      {
        backend: this.#backend,
        fails: 'open',
        err,
      },
    );
  }

  /** A call to the backend answered: ends an outage. */
  succeeded(): void {
    if (this.#downSince === undefined) return;
    const outageMs = this.#clock.now() - this.#downSince;
    this.#downSince = undefined;
    this.#up.set(1);
    this.#logger.info('shared limits reachable again: rate limits and quotas are global', {
      backend: this.#backend,
      outage_ms: outageMs,
    });
  }

  /** While down: true at most once per PROBE_INTERVAL_MS, when the caller should try the backend. */
  probeDue(): boolean {
    const now = this.#clock.now();
    if (now < this.#nextProbe) return false;
    this.#nextProbe = now + PROBE_INTERVAL_MS;
    return true;
  }

  /** One decision made locally during an outage. */
  fellBack(): void {
    this.#fallback.inc();
  }

  /** `calls` admitted on credit turned out to be beyond a key's daily quota. */
  overran(calls: number): void {
    this.#overrun.inc(calls);
  }
}
