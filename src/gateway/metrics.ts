/**
 * Gateway metrics for the API listener's `/metrics` (Prometheus). Labels are bounded and carry no
 * secrets: `network` is a configured network or "unknown", `status` an HTTP status, `result` one of
 * ok | connect | timeout | network | status | garbled. No origin addresses, no pool names (the endpoint
 * needs no token).
 *
 *   switchyard_gateway_requests_total{network,status}           HTTP requests answered
 *   switchyard_gateway_request_duration_seconds{network}        time to answer
 *   switchyard_gateway_calls_total{network}                     JSON-RPC calls (batch elements count one each)
 *   switchyard_gateway_upstream_attempts_total{network,result}  attempts on origins
 */
import type { Counter, Histogram, MetricsRegistry } from '../metrics.js';

export class GatewayMetrics {
  readonly #networks: ReadonlySet<string>;
  readonly #requests: Counter | undefined;
  readonly #duration: Histogram | undefined;
  readonly #calls: Counter | undefined;
  readonly #attempts: Counter | undefined;

  constructor(registry: MetricsRegistry | undefined, networks: Iterable<string>) {
    this.#networks = new Set(networks);
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
      'Attempts on origins by result (ok, connect, timeout, network, status, garbled)',
      ['network', 'result'],
    );
  }

  #label(network: string): string {
    return this.#networks.has(network) ? network : 'unknown';
  }

  request(network: string, status: number, seconds: number): void {
    const label = this.#label(network);
    this.#requests?.inc({ network: label, status: String(status) });
    this.#duration?.observe({ network: label }, seconds);
  }

  calls(network: string, count: number): void {
    this.#calls?.inc({ network: this.#label(network) }, count);
  }

  attempt(network: string, result: string): void {
    this.#attempts?.inc({ network: this.#label(network), result });
  }
}
