/**
 * Per-origin series of client traffic (SPEC §16), one count and one duration per attempt on an origin
 * (upstream/attempt.ts records them where it records the per-origin statistics):
 *
 *   switchyard_origin_requests_total{network,pool,origin,outcome}     attempts by outcome (origin-outcome.ts)
 *   switchyard_origin_request_duration_seconds{network,pool,origin}   attempt duration (histogram)
 *
 * Labels are the configured network, the pool's name and the origin's name — never an address (it may
 * hold an API key). Head polls and monitor probes are not counted here (switchyard_health_* and the chain
 * tracker's series). Each (network, pool, origin) is bound once, on its first attempt, and kept: the hot
 * path does three map reads and no string building. A series stays until restart after its origin left.
 */
import type { Counter, Histogram, MetricsRegistry } from '../metrics/registry.js';
import type { OriginOutcome } from './upstream/origin-outcome.js';

interface OriginSeries {
  readonly duration: { observe(value: number): void };
  readonly outcomes: Map<OriginOutcome, { inc(value?: number): void }>;
  readonly labels: { network: string; pool: string; origin: string };
}

export class OriginMetrics {
  readonly #requests: Counter;
  readonly #duration: Histogram;
  /** network → pool → origin → its bound series. */
  readonly #bound = new Map<string, Map<string, Map<string, OriginSeries>>>();

  constructor(registry: MetricsRegistry) {
    this.#requests = registry.counter(
      'switchyard_origin_requests_total',
      'Attempts of client calls on each origin, by outcome (ok, error_answer, timeout, connect, http_status, bad_answer, throttled)',
      ['network', 'pool', 'origin', 'outcome'],
    );
    this.#duration = registry.histogram(
      'switchyard_origin_request_duration_seconds',
      'Duration of attempts of client calls on each origin',
      ['network', 'pool', 'origin'],
    );
  }

  attempt(network: string, pool: string, origin: string, outcome: OriginOutcome, seconds: number): void {
    const bound = this.#of(network, pool, origin);
    let counter = bound.outcomes.get(outcome);
    if (counter === undefined) {
      counter = this.#requests.series({ ...bound.labels, outcome });
      bound.outcomes.set(outcome, counter);
    }
    counter.inc();
    bound.duration.observe(seconds);
  }

  #of(network: string, pool: string, origin: string): OriginSeries {
    let pools = this.#bound.get(network);
    if (pools === undefined) {
      pools = new Map();
      this.#bound.set(network, pools);
    }
    let origins = pools.get(pool);
    if (origins === undefined) {
      origins = new Map();
      pools.set(pool, origins);
    }
    let bound = origins.get(origin);
    if (bound === undefined) {
      const labels = { network, pool, origin };
      bound = { labels, duration: this.#duration.series(labels), outcomes: new Map() };
      origins.set(origin, bound);
    }
    return bound;
  }
}
