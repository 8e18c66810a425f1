/**
 * WebSocket metrics of the gateway (SPEC §10): open connections, open subscriptions by kind, messages
 * in and out (out counts answers and notifications), and connections closed as slow consumers (1008).
 * Nothing is recorded without a registry.
 */
import type { MetricsRegistry } from '../../metrics/registry.js';

type Inc = { inc(value?: number): void };

export class WsMetrics {
  readonly #connections: { inc(labels: Record<string, string>, value?: number): void } | undefined;
  readonly #subscriptions: { inc(labels: Record<string, string>, value?: number): void } | undefined;
  readonly #in: Inc | undefined;
  readonly #out: Inc | undefined;
  readonly #slow: Inc | undefined;

  constructor(registry: MetricsRegistry | undefined) {
    this.#connections = registry?.gauge(
      'switchyard_gateway_ws_connections',
      'Open WebSocket connections of the gateway',
      [],
    );
    this.#subscriptions = registry?.gauge(
      'switchyard_gateway_ws_subscriptions',
      'Open WebSocket subscriptions by kind (newHeads, logs, newPendingTransactions)',
      ['kind'],
    );
    this.#in = registry
      ?.counter('switchyard_gateway_ws_messages_in_total', 'WebSocket messages received from clients', [])
      .series({});
    this.#out = registry
      ?.counter('switchyard_gateway_ws_messages_out_total', 'WebSocket messages sent: answers and notifications', [])
      .series({});
    this.#slow = registry
      ?.counter(
        'switchyard_gateway_ws_slow_consumer_closes_total',
        'WebSocket connections closed with 1008 "slow consumer"',
        [],
      )
      .series({});
  }

  connection(delta: 1 | -1): void {
    this.#connections?.inc({}, delta);
  }

  subscribed(kind: string, delta: number): void {
    this.#subscriptions?.inc({ kind }, delta);
  }

  messageIn(): void {
    this.#in?.inc();
  }

  messageOut(): void {
    this.#out?.inc();
  }

  slowConsumer(): void {
    this.#slow?.inc();
  }
}
