/**
 * Per-method series (SPEC §16): `switchyard_rpc_requests_total{network,method,outcome}`, one count per
 * JSON-RPC call (a batch counts each element). `network` is a configured network or `unknown`; `method`
 * a standard method name or `other` (rpc/methods.ts `methodLabel`: bounded whatever clients send);
 * `outcome` one of
 *   ok            answered with a `result` (from an origin, the cache or the connection itself)
 *   error_answer  an origin's own JSON-RPC `error`, passed through
 *   refused       the gateway refused the call (invalid, unknown or denied method, bad params, too wide a
 *                 logs range, rate limit, quota, unknown or retired network, unreadable body): a 4xx error
 *   failed        the gateway could not get an answer (every origin failed or timed out, none healthy,
 *                 busy, internal error): a 5xx error
 * A body that cannot be parsed counts once, as `other` / `refused`.
 * Series are bound on first use and kept (the hot path reads two maps and builds no string). The last
 * series counted is remembered: a batch's calls mostly share one method and outcome, and then each call
 * after the first costs three string comparisons instead of the lookups.
 */
import type { Counter, MetricsRegistry } from '../metrics/registry.js';
import { methodLabel } from './rpc/methods.js';

export type CallOutcome = 'ok' | 'error_answer' | 'refused' | 'failed';

type MethodSeries = Partial<Record<CallOutcome, { inc(value?: number): void }>>;

export class RpcMetrics {
  readonly #requests: Counter;
  /** network → method label → outcome → series; only standard names and `other` are ever keys. */
  readonly #bound = new Map<string, Map<string, MethodSeries>>();
  readonly #networks: ReadonlySet<string>;
  /** The series counted last, and what it was looked up by (fields, so a miss allocates nothing). */
  #lastSeries: { inc(value?: number): void } | undefined;
  #lastNetwork = '';
  #lastMethod = '';
  #lastOutcome: CallOutcome = 'ok';

  constructor(registry: MetricsRegistry, networks: Iterable<string>) {
    this.#requests = registry.counter(
      'switchyard_rpc_requests_total',
      'JSON-RPC calls by network, standard method name (else "other") and outcome (ok, error_answer, refused, failed)',
      ['network', 'method', 'outcome'],
    );
    this.#networks = new Set(networks);
  }

  call(network: string, method: string, outcome: CallOutcome): void {
    let series = this.#lastSeries;
    if (
      series === undefined ||
      method !== this.#lastMethod ||
      outcome !== this.#lastOutcome ||
      network !== this.#lastNetwork
    ) {
      series = this.#series(network, method, outcome);
      this.#lastSeries = series;
      this.#lastNetwork = network;
      this.#lastMethod = method;
      this.#lastOutcome = outcome;
    }
    series.inc();
  }

  #series(network: string, method: string, outcome: CallOutcome): { inc(value?: number): void } {
    const methods = this.#methods(network);
    let bound = methods.get(method);
    if (bound === undefined) {
      const label = methodLabel(method);
      bound = methods.get(label);
      if (bound === undefined) {
        bound = {};
        methods.set(label, bound);
      }
    }
    let series = bound[outcome];
    if (series === undefined) {
      const label = methodLabel(method);
      series = this.#requests.series({ network: this.#label(network), method: label, outcome });
      bound[outcome] = series;
    }
    return series;
  }

  #label(network: string): string {
    return this.#networks.has(network) ? network : 'unknown';
  }

  #methods(network: string): Map<string, MethodSeries> {
    const label = this.#label(network);
    let methods = this.#bound.get(label);
    if (methods === undefined) {
      methods = new Map();
      this.#bound.set(label, methods);
    }
    return methods;
  }
}
