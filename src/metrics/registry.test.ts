import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricsRegistry } from './registry.js';

test('a bound counter series adds to the same sample as inc(labels), and appears only once used', () => {
  const registry = new MetricsRegistry();
  const requests = registry.counter('t_requests_total', 'Requests', ['network', 'status']);
  const bound = requests.series({ network: 'sepolia', status: '200' });
  assert.doesNotMatch(registry.render(), /t_requests_total\{/);
  bound.inc();
  bound.inc(2);
  requests.inc({ network: 'sepolia', status: '200' });
  assert.match(registry.render(), /^t_requests_total\{network="sepolia",status="200"\} 4$/m);
  assert.throws(() => bound.inc(-1), /cannot decrease/);
});

test('a bound histogram series records like observe(labels)', () => {
  const registry = new MetricsRegistry();
  const duration = registry.histogram('t_seconds', 'Time', ['network'], [0.1, 1]);
  const bound = duration.series({ network: 'a' });
  bound.observe(0.05);
  duration.observe({ network: 'a' }, 0.5);
  bound.observe(5);
  const text = registry.render();
  assert.match(text, /^t_seconds_bucket\{network="a",le="0.1"\} 1$/m);
  assert.match(text, /^t_seconds_bucket\{network="a",le="1"\} 2$/m);
  assert.match(text, /^t_seconds_bucket\{network="a",le="\+Inf"\} 3$/m);
  assert.match(text, /^t_seconds_sum\{network="a"\} 5.55$/m);
  assert.match(text, /^t_seconds_count\{network="a"\} 3$/m);
});
