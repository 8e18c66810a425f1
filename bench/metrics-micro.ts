/**
 * Micro-benchmark of the metric series on the hot path (docs/benchmarks.md "Metrics on the hot path"):
 * what one forwarded call adds — one `rpcCall` and one `originAttempt` — through the bound series of
 * gateway/metrics.ts, against the same counts through prom-client (labels passed per call, its usual
 * use), and what a scrape of each costs. prom-client is no dependency: point PROM_CLIENT at an install
 * of it to include it (e.g. `npm install --prefix /tmp/pc prom-client` then
 * `PROM_CLIENT=/tmp/pc/node_modules/prom-client/index.js node --import tsx bench/metrics-micro.ts`).
 */
import { GatewayMetrics } from '../src/gateway/metrics.js';
import { RequestTrace } from '../src/gateway/rpc/request-trace.js';
import { silentLogger } from '../src/log.js';
import { registerProcessMetrics } from '../src/metrics/process.js';
import { MetricsRegistry } from '../src/metrics/registry.js';
import { requestIdOf } from '../src/model/request-id.js';

const CALLS = 2_000_000;

/** The part of prom-client timed here (typed by hand: it is no dependency). */
interface PromChild {
  inc(): void;
  observe(value: number): void;
}
interface PromMetric {
  inc(labels: Record<string, string>): void;
  observe(labels: Record<string, string>, value: number): void;
  labels(...values: string[]): PromChild;
}
interface PromClient {
  Registry: new () => { getMetricsAsJSON(): Promise<unknown> };
  collectDefaultMetrics(options: { register: unknown }): void;
  Counter: new (options: Record<string, unknown>) => PromMetric;
  Histogram: new (options: Record<string, unknown>) => PromMetric;
}
const METHODS = ['eth_call', 'eth_getBalance', 'eth_blockNumber', 'eth_getLogs', 'made_up'];
const ORIGINS = ['o1', 'o2', 'o3', 'o4'];

function time(label: string, run: () => void): number {
  run(); // warm-up: let V8 optimise
  const started = process.hrtime.bigint();
  run();
  const ns = Number(process.hrtime.bigint() - started);
  console.log(`${label.padEnd(44)} ${(ns / CALLS).toFixed(1).padStart(7)} ns per call`);
  return ns / CALLS;
}

function timeScrape(label: string, scrape: () => unknown): void {
  for (let i = 0; i < 20; i += 1) scrape();
  const started = process.hrtime.bigint();
  const rounds = 200;
  for (let i = 0; i < rounds; i += 1) scrape();
  const us = Number(process.hrtime.bigint() - started) / rounds / 1000;
  console.log(`${label.padEnd(44)} ${us.toFixed(0).padStart(7)} µs per scrape`);
}

const registry = new MetricsRegistry();
registerProcessMetrics(registry);
const metrics = new GatewayMetrics(registry, ['sepolia']);
time('switchyard: rpcCall + originAttempt', () => {
  for (let i = 0; i < CALLS; i += 1) {
    metrics.rpcCall('sepolia', METHODS[i % 5] as string, 'ok');
    metrics.originAttempt('sepolia', 'main', ORIGINS[i % 4] as string, 'ok', 0.012);
  }
});
time('switchyard: the older per-network attempt counter', () => {
  for (let i = 0; i < CALLS; i += 1) metrics.attempt('sepolia', 'ok');
});
let kept: RequestTrace | undefined;
time('request id made + trace + one method named', () => {
  for (let i = 0; i < CALLS; i += 1) {
    kept = new RequestTrace(requestIdOf(undefined), silentLogger);
    kept.method('eth_call');
  }
});
time("request id kept (a client's) + trace", () => {
  for (let i = 0; i < CALLS; i += 1) kept = new RequestTrace(requestIdOf('client-request-0042'), silentLogger);
});
timeScrape('switchyard: render the registry', () => registry.render());

const path = process.env.PROM_CLIENT;
if (path !== undefined) {
  const client = (await import(path)) as PromClient;
  const promRegistry = new client.Registry();
  client.collectDefaultMetrics({ register: promRegistry });
  const rpc = new client.Counter({
    name: 'rpc_total',
    help: 'h',
    labelNames: ['network', 'method', 'outcome'],
    registers: [promRegistry],
  });
  const origin = new client.Counter({
    name: 'origin_total',
    help: 'h',
    labelNames: ['network', 'pool', 'origin', 'outcome'],
    registers: [promRegistry],
  });
  const duration = new client.Histogram({
    name: 'origin_seconds',
    help: 'h',
    labelNames: ['network', 'pool', 'origin'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [promRegistry],
  });
  time('prom-client: inc + inc + observe, labels per call', () => {
    for (let i = 0; i < CALLS; i += 1) {
      rpc.inc({ network: 'sepolia', method: METHODS[i % 5] as string, outcome: 'ok' });
      const labels = { network: 'sepolia', pool: 'main', origin: ORIGINS[i % 4] as string };
      origin.inc({ ...labels, outcome: 'ok' });
      duration.observe(labels, 0.012);
    }
  });
  const bound = METHODS.map((method) => rpc.labels('sepolia', method, 'ok'));
  const boundOrigins = ORIGINS.map((name) => origin.labels('sepolia', 'main', name, 'ok'));
  const boundDurations = ORIGINS.map((name) => duration.labels('sepolia', 'main', name));
  time('prom-client: the same with bound children', () => {
    for (let i = 0; i < CALLS; i += 1) {
      bound[i % 5]?.inc();
      boundOrigins[i % 4]?.inc();
      boundDurations[i % 4]?.observe(0.012);
    }
  });
  const json = async () => promRegistry.getMetricsAsJSON();
  const started = process.hrtime.bigint();
  for (let i = 0; i < 200; i += 1) await json();
  const us = Number(process.hrtime.bigint() - started) / 200 / 1000;
  console.log(`${'prom-client: getMetricsAsJSON (to convert)'.padEnd(44)} ${us.toFixed(0).padStart(7)} µs per scrape`);
}
