/**
 * Gateway metrics for the API listener's `/metrics` (Prometheus). Labels are bounded and carry no
 * secrets: `network` is a configured network or "unknown", `status` an HTTP status, `result` one of
 * ok | connect | timeout | network | status | garbled | throttled | busy, `outcome` won | lost. No origin
 * addresses, no pool names (the endpoint needs no token).
 *
 *   switchyard_gateway_requests_total{network,status}           HTTP requests answered
 *   switchyard_gateway_request_duration_seconds{network}        time to answer
 *   switchyard_gateway_calls_total{network}                     JSON-RPC calls (batch elements count one each)
 *   switchyard_gateway_upstream_attempts_total{network,result}  attempts on origins (busy: GATEWAY_BUSY)
 *   switchyard_hedges_total{network,outcome}                    hedged calls answered: won = by the hedge,
 *                                                               lost = by the attempt it hedged (SPEC §17)
 *   switchyard_gateway_streams_cut_total                        streamed answers cut: client stalled
 *   switchyard_gateway_connections_refused_total{limit}         connections closed on accept, by limit
 *                                                               (max_connections | max_connections_per_client)
 *   switchyard_verify_failures_total{network,origin,method}     answers that failed verification (SPEC §18):
 *                                                               origin names of the config, methods that
 *                                                               are verified (rpc/methods.ts `verify`)
 * and the per-origin and per-method series of origin-metrics.ts and rpc-metrics.ts, whose labels are
 * pool and origin names (never addresses) and standard method names (else "other").
 */
import type { Counter, Histogram, MetricsRegistry } from '../metrics/registry.js';
import { OriginMetrics } from './origin-metrics.js';
import { type CallOutcome, RpcMetrics } from './rpc-metrics.js';
import type { OriginOutcome } from './upstream/origin-outcome.js';

interface NetworkSeries {
  /** The `network` label: a configured network, or "unknown". */
  readonly label: string;
  readonly duration: { observe(value: number): void } | undefined;
  readonly calls: { inc(value?: number): void } | undefined;
  /** status → series, filled as statuses occur */
  readonly requests: Map<number, { inc(value?: number): void }>;
  /** result → series */
  readonly attempts: Map<string, { inc(value?: number): void }>;
  readonly hedgesWon: { inc(value?: number): void } | undefined;
  readonly hedgesLost: { inc(value?: number): void } | undefined;
}

/** Each (network, label) series is bound once and kept: the hot path never builds a label key. */
export class GatewayMetrics {
  readonly #series = new Map<string, NetworkSeries>();
  readonly #requests: Counter | undefined;
  readonly #duration: Histogram | undefined;
  readonly #calls: Counter | undefined;
  readonly #attempts: Counter | undefined;
  readonly #streamsCut: { inc(value?: number): void } | undefined;
  readonly #refused: Counter | undefined;
  readonly #origins: OriginMetrics | undefined;
  readonly #rpc: RpcMetrics | undefined;
  readonly #hedges: Counter | undefined;
  readonly #verifyFailures: Counter | undefined;

  constructor(registry: MetricsRegistry | undefined, networks: Iterable<string>) {
    const configured = [...networks];
    this.#origins = registry === undefined ? undefined : new OriginMetrics(registry);
    this.#rpc = registry === undefined ? undefined : new RpcMetrics(registry, configured);
    this.#requests = registry?.counter(
      'switchyard_gateway_requests_total',
      'Gateway HTTP requests by network and status',
      ['network', 'status'],
    );
    this.#duration = registry?.histogram('switchyard_gateway_request_duration_seconds', 'Gateway time to answer', [
      'network',
    ]);
    this.#calls = registry?.counter('switchyard_gateway_calls_total', 'JSON-RPC calls received (batch elements each)', [
      'network',
    ]);
    this.#attempts = registry?.counter(
      'switchyard_gateway_upstream_attempts_total',
      'Attempts on origins by result (ok, connect, timeout, network, status, garbled, throttled, busy)',
      ['network', 'result'],
    );
    this.#hedges = registry?.counter(
      'switchyard_hedges_total',
      'Hedged reads answered: won = the hedge request answered first, lost = the request it hedged did',
      ['network', 'outcome'],
    );
    this.#streamsCut = registry
      ?.counter(
        'switchyard_gateway_streams_cut_total',
        'Streamed answers cut because the client took no bytes for gateway.stream_stall_timeout',
        [],
      )
      .series({});
    this.#refused = registry?.counter(
      'switchyard_gateway_connections_refused_total',
      'Client connections closed as accepted, by the limit they were over',
      ['limit'],
    );
    this.#verifyFailures = registry?.counter(
      'switchyard_verify_failures_total',
      "Origins' answers that failed verification (networks.{name}.verify), by origin and method",
      ['network', 'origin', 'method'],
    );
    for (const network of configured) this.#bind(network);
    if (!this.#series.has('unknown')) this.#bind('unknown');
  }

  /** Networks a config reload added get their own series (those removed keep theirs: counters stay). */
  addNetworks(networks: Iterable<string>): void {
    for (const network of networks) if (!this.#series.has(network)) this.#bind(network);
  }

  #bind(network: string): NetworkSeries {
    const series: NetworkSeries = {
      label: network,
      duration: this.#duration?.series({ network }),
      calls: this.#calls?.series({ network }),
      requests: new Map(),
      attempts: new Map(),
      hedgesWon: this.#hedges?.series({ network, outcome: 'won' }),
      hedgesLost: this.#hedges?.series({ network, outcome: 'lost' }),
    };
    this.#series.set(network, series);
    return series;
  }

  /** A configured network's series; every other name shares the "unknown" ones (bounded labels). */
  #of(network: string): NetworkSeries {
    return this.#series.get(network) ?? (this.#series.get('unknown') as NetworkSeries);
  }

  request(network: string, status: number, seconds: number): void {
    const series = this.#of(network);
    if (this.#requests !== undefined) {
      let counter = series.requests.get(status);
      if (counter === undefined) {
        counter = this.#requests.series({ network: series.label, status: String(status) });
        series.requests.set(status, counter);
      }
      counter.inc();
    }
    series.duration?.observe(seconds);
  }

  calls(network: string, count: number): void {
    this.#of(network).calls?.inc(count);
  }

  streamCut(): void {
    this.#streamsCut?.inc();
  }

  connectionRefused(limit: string): void {
    this.#refused?.series({ limit }).inc();
  }

  /** One attempt of a client call on an origin (origin-metrics.ts). */
  originAttempt(network: string, pool: string, origin: string, outcome: OriginOutcome, seconds: number): void {
    this.#origins?.attempt(network, pool, origin, outcome, seconds);
  }

  /** One JSON-RPC call's outcome (rpc-metrics.ts). */
  rpcCall(network: string, method: string, outcome: CallOutcome): void {
    this.#rpc?.call(network, method, outcome);
  }

  /** A hedged call was answered: by the hedge (`won`) or by the attempt it hedged (`lost`). */
  hedge(network: string, outcome: 'won' | 'lost'): void {
    const series = this.#of(network);
    (outcome === 'won' ? series.hedgesWon : series.hedgesLost)?.inc();
  }

  /** An origin's answer failed verification (rare: the series is looked up each time). */
  verifyFailure(network: string, origin: string, method: string): void {
    this.#verifyFailures?.inc({ network: this.#of(network).label, origin, method });
  }

  attempt(network: string, result: string): void {
    if (this.#attempts === undefined) return;
    const series = this.#of(network);
    let counter = series.attempts.get(result);
    if (counter === undefined) {
      counter = this.#attempts.series({ network: series.label, result });
      series.attempts.set(result, counter);
    }
    counter.inc();
  }
}
